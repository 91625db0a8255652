+!ping[source(S)] <- .send(S, tell, pong).
