!start.
+!start <- .send(bob, askOne, price(gin, P), price(gin, P)); .print("never ", P).
-!start[error(E)] <- .print("ask failed: ", E); .stopMAS.
