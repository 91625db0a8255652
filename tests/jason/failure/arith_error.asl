// arithmetic on a non-number found at run time
!start.
+!start <- Y = a; X = Y + 1; .print("X = ", X); .stopMAS.
-!start[error(E)] <- .print("error ", E); .stopMAS.
