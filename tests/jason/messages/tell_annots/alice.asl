!start.
+!start <- .send(bob, tell, b(1)[certainty(0.9)]); .send(bob, tell, b(1)[extra]); .wait(200); .send(bob, achieve, show).
