!start.
+!start <- .send(bob, achieve, work); .wait(100); .send(bob, unachieve, work); .wait(100);
   .send(bob, askOne, working(X), A); .print("bob ", A); .stopMAS.
