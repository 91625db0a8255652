// error kinds and messages of a few failures
!start.
+!start <- !a; !b; !c; .stopMAS.
+!a <- .fail(error_msg("my message")).
-!a[error(E), error_msg(M)] <- .print("a: ", E, " / ", M).
+!b <- !nowhere.
-!b[error(E), error_msg(M)] <- .print("b: ", E, " / ", M).
+!c <- ?nothing.
-!c[error(E), error_msg(M)] <- .print("c: ", E, " / ", M).
