// a failure plan that fails: the next failure plan below handles it
!start.
+!start <- !outer; .print("start goes on"); .stopMAS.
+!outer <- !inner; .print("never").
+!inner <- .fail.
-!inner <- .print("inner handler fails"); .fail.
-!outer <- .print("outer handler").
