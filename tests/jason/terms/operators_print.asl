// terms built with operators, printed
!start.
+!start <- X = (a & b); .print(X); Y = (a | b); .print(Y); Z = (not a); .print(Z);
   T = (1 < 2); .print(T);
   .stopMAS.
