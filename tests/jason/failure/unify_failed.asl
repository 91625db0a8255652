// a unification that fails in a body
!start.
+!start <- X = 3; X = 4; .print("never").
-!start[error(E)] <- .print("error ", E); .stopMAS.
