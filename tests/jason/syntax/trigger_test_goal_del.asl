// -?g and -b plans parse; -?g is a failure plan for a test goal
!start.
+!start <- ?q(X); .print("q ", X); .stopMAS.
+?q(X) <- .fail.
-?q(X) <- .print("test goal failure plan").
-!start[error(E)] <- .print("start failed ", E); .stopMAS.
