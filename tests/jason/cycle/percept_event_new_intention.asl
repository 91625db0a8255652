// a belief reaction of a belief added by an initial belief runs in its own intention
b(1).
!start.
+b(X) <- .print("b ", X).
+!start <- .print("start"); .wait(20); .stopMAS.
