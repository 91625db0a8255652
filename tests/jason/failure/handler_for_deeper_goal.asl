// the failure plan of the goal two levels up, and what runs after it
!start.
+!start <- !a; .print("start after a"); .stopMAS.
+!a <- !b; .print("never a").
+!b <- !c; .print("never b").
+!c <- X = 1; X > 2.
-!a[error(E), code_line(L)] <- .print("a handles ", E, " from line ", L).
