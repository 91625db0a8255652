// -+ raises a removal event then an addition event
c(0).
!start.
+!start <- -+c(1); .print("after -+"); .wait(50); .stopMAS.
+c(X) <- .print("added ", X).
-c(X) <- .print("removed ", X).
