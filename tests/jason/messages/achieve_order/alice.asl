!start.
+!start <- .send(bob, achieve, say(1)); .send(bob, achieve, say(2)); .send(bob, achieve, say(3)); .wait(300); .stopMAS.
