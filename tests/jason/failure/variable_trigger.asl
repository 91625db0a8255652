// a failure plan with a variable trigger catches every goal's failure
!start.
+!start <- !a; !b(2); .print("end"); .stopMAS.
+!a <- .fail.
+!b(X) <- X > 5.
-!G[error(E)] <- .print("failed ", G, ": ", E).
