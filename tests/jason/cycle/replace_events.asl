// -+ raises the removal as a new intention and the addition on the same one
c(0).
!start.
+!start <- .print(s1); -+c(1); .print(s2); .wait(20); .stopMAS.
+c(N) <- .print("added ", N).
-c(N) <- .print("removed ", N).
