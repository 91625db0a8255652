// .nth with a bound index and with an unbound one
!start.
+!start <- .nth(0, [a,b,c], X); .print(X); .nth(2, [a,b,c], Y); .print(Y);
   .findall(I, .nth(I, [a,b,c], _), L); .print(L);
   .findall(I, .nth(I, [x,y,x], x), P); .print(P);
   .stopMAS.
