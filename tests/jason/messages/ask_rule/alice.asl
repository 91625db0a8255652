!start.
+!start <- .send(bob, askOne, cheap(X), A); .print(A); .stopMAS.
