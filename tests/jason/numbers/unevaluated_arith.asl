// X = Y + 1 with Y unbound binds X to (Y+1), printed so and evaluated once Y has a value; div, mod as Java
!start.
+!start <- X = Y + 1; .print(X); Y = 2; .print(X); Z = X * 2; .print(Z); .print(W - 1); .print(-W); .print(3 div 2, " ", 7 mod 0, " ", 2.5 div 1, " ", -7 div 2, " ", -7 mod 2); .stopMAS.
