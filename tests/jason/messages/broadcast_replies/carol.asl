+!report(N)[source(A)] <- .send(A, tell, done(N * 2)).
