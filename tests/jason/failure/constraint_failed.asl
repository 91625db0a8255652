// a false relational expression in a body
!start.
+!start <- X = 3; X > 5; .print("never").
-!start[error(E), error_msg(M)] <- .print(E, " | ", M); .stopMAS.
