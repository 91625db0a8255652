// a failure with no failure plan goes up to the caller's goal
!start.
+!start <- !a; .print("never").
+!a <- !b; .print("never a").
+!b <- .fail.
-!start[error(E)] <- .print("start failed: ", E); .stopMAS.
