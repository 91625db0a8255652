+hi(X)[source(S)] <- .wait(20); .print("carol: hi ", X, " from ", S).
-hi(X)[source(S)] <- .wait(20); .print("carol: no more hi ", X).
