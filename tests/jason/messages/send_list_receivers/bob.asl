+hi[source(S)] <- .print("bob: hi from ", S).
