// a failure deep in sub-goals is handled by the nearest failure plan
!start.
+!start <- !a; .print("start after a"); .stopMAS.
+!a <- !b; .print("never a after b").
+!b <- !c; .print("never b after c").
+!c <- .fail(error(deep)).
-!a[error(E)] <- .print("a recovers from ", E).
