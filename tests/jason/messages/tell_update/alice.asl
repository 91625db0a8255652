!start.
+!start <- .send(bob, tell, temp(20)); .wait(100); .send(bob, untell, temp(20)); .send(bob, tell, temp(25)); .wait(100); .send(bob, achieve, show).
