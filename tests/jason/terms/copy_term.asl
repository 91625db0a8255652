// .copy_term and variables
!start.
+!start <- X = f(A, B, A); .copy_term(X, Y); Y = f(1, 2, Z); .print(Z); .print(X);
   .stopMAS.
