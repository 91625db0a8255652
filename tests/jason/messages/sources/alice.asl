!start.
+!start <- +fact(1); .send(bob, tell, fact(1)); .wait(50); .send(bob, askOne, fact(1), A); .print(A); .stopMAS.
