+?nothing(X) <- .wait(1000).
