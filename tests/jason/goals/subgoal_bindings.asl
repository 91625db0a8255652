// a sub-goal's plan binds the caller's variables
!start.
+!start <- !double(4, X); .print(X); !double(X, Y); .print(Y); .stopMAS.
+!double(N, R) <- R = N * 2.
