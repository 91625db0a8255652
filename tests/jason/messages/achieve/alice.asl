!start.
+!start <- .send(bob, achieve, greet("hello")).
+!reply(M)[source(S)] <- .print("reply from ", S, ": ", M); .stopMAS.
