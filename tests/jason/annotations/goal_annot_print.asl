// a goal's annotations as the plan sees them
!start.
+!start <- !g(1)[a, z, b].
+!g(X)[A|R] <- .print(X, " ", A, " ", R); .stopMAS.
