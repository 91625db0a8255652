// a goal called in a loop body
!start.
+!start <- for (.member(X, [3, 1, 2])) { !show(X) }; .print("done"); .stopMAS.
+!show(X) : X > 1 <- .print("big ", X).
+!show(X) <- .print("small ", X).
