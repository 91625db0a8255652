// an unknown internal action fails at run time in Jason
!start.
+!start <- .no_such_action(1); .print("never").
-!start[error(E)] <- .print("failed: ", E); .stopMAS.
