// .range: steps, bound values, float bounds, empty ranges
!start.
+!start <- .findall(X, .range(X, 5, 1, -2), A); .print(A);
   .findall(X, .range(X, 3, 1), B); .print(B);
   .findall(X, .range(X, 1.9, 4.2), C); .print(C);
   .findall(X, .range(X, 0, 9, 4), D); .print(D);
   if (.range(2, 5, 1, -1)) { .print("2 in 5..1") } else { .print("2 not in 5..1") };
   if (.range(7, 1, 5)) { .print("?") } else { .print("7 not in 1..5") };
   .range(Y, 10, 20); .print("first ", Y);
   .stopMAS.
