// variables bound to variables print by their own names; _ numbered
!start.
+!start <- .print("X=", X, " Y=", Y); X = Y; .print(X); Y = 3; .print(X);
   Z = f(A, B, A); .print(Z); A = 1; .print(Z); .print([A, B, C]);
   W = _; .print(W); V = g(_, _); .print(V);
   .stopMAS.
