// a goal with no relevant plan
!start.
+!start <- !nowhere(1); .print("never").
-!start[error(E), error_msg(M)] <- .print(E, ": ", M); .stopMAS.
