// a test goal that fails
!start.
+!start <- ?nothing(X); .print("never").
-!start[error(E), error_msg(M), code_line(L)] <- .print(E, " | ", M, " | ", L); .stopMAS.
