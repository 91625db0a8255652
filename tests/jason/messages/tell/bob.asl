+price(I, P)[source(S)] <- .print(S, " says ", I, " costs ", P);
   if (I == wine) { .findall(X, price(X, _), L); .print(L); .stopMAS }.
