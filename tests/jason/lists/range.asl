// .range tests and enumerates
!start.
+!start <- .findall(X, .range(X, 1, 5), L); .print(L);
   .findall(Y, .range(Y, 0, 10, 3), M); .print(M);
   if (.range(3, 1, 5)) { .print("3 in 1..5") };
   .stopMAS.
