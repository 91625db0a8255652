// a failure plan for a goal that has no relevant plan
!start.
+!start <- !missing(1); .print("after missing"); .stopMAS.
-!missing(X)[error(E)] <- .print("missing ", X, ": ", E).
