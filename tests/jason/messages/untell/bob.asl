-fact(X)[source(S)] <- .print(S, " untold ", X).
+done <- .findall(X, fact(X), L); .print("left ", L); .stopMAS.
