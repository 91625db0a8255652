-nothing(_) <- .print("never").
-x[source(S)] <- .print("x untold by ", S).
+!show <- .count(x, N); .print("x count ", N); .stopMAS.
