// an error while evaluating a context (not a failure: the plan is not applicable)
!start.
+!start <- !g(a); .print("after"); .stopMAS.
+!g(X) : X > 3 <- .print("g > 3").
+!g(X) <- .print("g fallback ", X).
