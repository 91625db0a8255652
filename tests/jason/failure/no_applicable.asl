// a goal whose plans are all not applicable
!start.
+!start <- !g(1); .print("never").
+!g(X) : X > 5 <- .print("big").
-!start[error(E), error_msg(M)] <- .print(E, ": ", M); .stopMAS.
