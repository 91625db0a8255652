// !! with an unbound argument does not bind the caller's variable
!start.
+!start <- !!set(X); .wait(20); .print("X is still ", X); .stopMAS.
+!set(Y) <- Y = 5; .print("set ", Y).
