!start.
+!start <- .send(bob, tellHow, "+!hello(N) <- .print(\"hello \", N)."); .wait(200); .send(bob, achieve, hello(1)); .wait(200); .stopMAS.
