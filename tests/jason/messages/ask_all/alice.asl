!start.
+!start <- .send(bob, askAll, price(_, _), L); .print(L);
   .send(bob, askAll, nothing(_), E); .print(E);
   .stopMAS.
