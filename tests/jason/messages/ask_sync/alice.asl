!start.
+!start <- .send(bob, askOne, price(beer, P), A); .print("answer ", A, " P = ", P);
   .send(bob, askOne, price(gin, _), B); .print("gin answer ", B);
   .stopMAS.
