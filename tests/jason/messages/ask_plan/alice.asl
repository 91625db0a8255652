!start.
+!start <- .send(bob, askOne, price(gin, P), A); .print("answer ", A); .stopMAS.
