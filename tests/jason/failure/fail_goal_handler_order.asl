// the intention's frames above the failing one are removed before the handler runs
!start.
+!start <- !outer; .print("start done"); .stopMAS.
+!outer <- !inner; .print("never").
+!inner <- .fail.
-!inner <- .print("inner handler"); .fail.
-!outer <- .print("outer handler").
