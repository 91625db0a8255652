// -b raises -b events only when something was removed
b(1).
!start.
+!start <- -b(1); -b(2); .wait(50); .print("done"); .stopMAS.
-b(X) <- .print("removed b(", X, ")").
