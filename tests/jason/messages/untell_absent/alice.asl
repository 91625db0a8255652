!start.
+!start <- .send(bob, untell, nothing(1)); .send(bob, tell, x); .wait(100); .send(bob, untell, x); .wait(100); .send(bob, achieve, show).
