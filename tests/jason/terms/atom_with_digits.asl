// atoms with digits and underscores, variables with underscores
!start.
+!start <- X = a_1b; .print(X); _Y = 2; .print(_Y); Z = f(a_B); .print(Z); .stopMAS.
