x(1)[source(alice)].
+!fail_me <- .fail.
-!fail_me[error(E)] <- .print("bob recovered ", E).
-x(N)[source(S)] <- .print("untold ", N, " by ", S).
