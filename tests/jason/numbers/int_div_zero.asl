// division by zero
!start.
+!start <- X = 1 / 0; .print(X); Y = -1 / 0; .print(Y); Z = 0 / 0; .print(Z); .stopMAS.
-!start[error(E)] <- .print("error ", E); .stopMAS.
