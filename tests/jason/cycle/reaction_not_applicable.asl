// a belief event with no applicable plan is simply discarded
!start.
+!start <- +b(1); .print(s1); +b(5); .print(s2); .stopMAS.
+b(X) : X > 3 <- .print("big b ", X).
