+ping(N)[source(A)] <- .print("ping ", N); .send(A, tell, pong(N)).
