// error annotations when a sub-goal fails without its own failure plan
!start.
+!start <- !a.
+!a <- !b.
+!b <- X = 1; X == 2.
-!start[error(E), code_line(L)] <- .print(E, " at line ", L); .stopMAS.
