!start.
+!start <- .send(bob, askOne, price(beer, _), price(_, P)); .print("price ", P);
   .send(bob, askOne, price(X, _), Ans); Ans = price(Item, Cost)[source(S)]; .print(Item, " ", Cost, " ", S);
   .stopMAS.
