// tell: the receiver gets a belief with source(alice)
!start.
+!start <- .send(bob, tell, price(beer, 3)); .send(bob, tell, price(wine, 9)).
