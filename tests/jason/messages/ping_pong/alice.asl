!start.
+!start <- .send(bob, tell, ping(1)).
+pong(N)[source(bob)] <- .print("pong ", N); if (N < 3) { .send(bob, tell, ping(N + 1)) } else { .stopMAS }.
