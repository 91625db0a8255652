// while with a belief counter
c(0).
!start.
+!start <- while (c(X) & X < 4) { .print("c = ", X); -+c(X + 1) }; ?c(F); .print("final ", F); .stopMAS.
