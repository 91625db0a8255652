// .abolish and belief-removal events
b(1). b(2).
!start.
+!start <- .abolish(b(_)); .print("abolished"); .wait(20); .stopMAS.
-b(X) <- .print("removed ", X).
