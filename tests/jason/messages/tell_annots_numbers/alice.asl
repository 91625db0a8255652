// a told literal keeps its annotations sorted; numbers reach the receiver as doubles
!start.
+!start <- .send(bob, tell, info(1)[z, a, m(2)]); .send(bob, tell, num(1.5E-5, 2.0, 1000000000000)); .wait(200); .stopMAS.
