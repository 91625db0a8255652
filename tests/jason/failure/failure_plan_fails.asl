// a failure plan that fails itself: the intention is dropped
!start.
!other.
+!start <- !g; .print("never").
+!g <- .fail.
-!g <- .print("handler"); .fail.
-!start <- .print("start handler").
+!other <- .wait(50); .print("other goes on"); .stopMAS.
