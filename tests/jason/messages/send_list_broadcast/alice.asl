// .send to a list of receivers, .broadcast of an untell
!start.
+!start <- .send([bob, carol], tell, hi(1)); .wait(50); .broadcast(untell, hi(1)); .wait(50);
   .send([bob, carol], askOne, hi(X)); .wait(50); .stopMAS.
