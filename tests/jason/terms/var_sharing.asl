// variables shared between terms and bound later
!start.
+!start <- X = f(Y, Z); Y = 1; .print(X); Z = g(Y); .print(X); .stopMAS.
