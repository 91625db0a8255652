!start.
+!start <- .send(bob, askOne, value(X), A); .print(A); .send(bob, askOne, value(2), B); .print(B); .stopMAS.
