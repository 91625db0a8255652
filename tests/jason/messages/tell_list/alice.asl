!start.
+!start <- .send(bob, tell, [a(1), a(2)]); .send(bob, tell, done).
