+news(X)[source(S)] <- .print("bob got news ", X, " from ", S).
