// arithmetic on a non-number
!start.
+!start <- X = a + 1; .print("X = ", X); .stopMAS.
-!start[error(E)] <- .print("error ", E); .stopMAS.
