!start.
+!start <- .send(bob, askOne, price(X), Ans); .print("ans ", Ans);
   .send(bob, askAll, item(_), All); .print("all ", All);
   .send(bob, achieve, work(3)); .wait(50);
   .send(bob, tell, done); .wait(50); .stopMAS.
+result(R)[source(S)] <- .print("result ", R, " from ", S).
