+hi(X)[source(S)] <- .print("bob: hi ", X, " from ", S).
-hi(X)[source(S)] <- .print("bob: no more hi ", X).
