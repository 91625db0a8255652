// annotations in triggers and on goals
!g[urgent].
!g.
+!g[urgent] <- .print("urgent g").
+!g[source(S)] <- .print("g from ", S); .stopMAS.
