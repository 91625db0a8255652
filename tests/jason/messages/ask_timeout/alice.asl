!start.
+!start <- .send(bob, askOne, nothing(X), A, 100); .print("answer ", A); .stopMAS.
