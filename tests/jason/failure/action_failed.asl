// a failing internal action
!start.
+!start <- .nth(5, [a, b], X); .print("never").
-!start[error(E), error_msg(M)] <- .print(E, " | ", M); .stopMAS.
