!start.
+!start <- .send(bob, tell, fact(1)); .send(bob, tell, fact(2)); .send(bob, untell, fact(1)); .send(bob, tell, done).
