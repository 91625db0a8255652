// a test goal with neither a belief nor a plan fails the plan: -!g catches it
!start.
+!start <- ?missing(X); .print("never").
-!start[error(E)] <- .print("failed: ", E); .stopMAS.
