!start.
+!start <- .send(bob, achieve, fail_me); .wait(50);
   .send(bob, askOne, missing(X), A, 100); .print("got ", A);
   .send(bob, untell, x(1)); .wait(20); .stopMAS.
-!start[error(E)] <- .print("start failed ", E); .stopMAS.
