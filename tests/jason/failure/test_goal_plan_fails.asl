// a +?g plan that fails
!start.
+!start <- ?q(X); .print("never").
+?q(X) <- X = 1; .fail.
-!start[error(E)] <- .print("start failed: ", E); .stopMAS.
