!start.
+!start <- .send(bob, askOne, price(beer, _)).
+price(I, P)[source(S)] <- .print(S, " answered ", I, " ", P); .stopMAS.
