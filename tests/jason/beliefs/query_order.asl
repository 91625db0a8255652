// the order of answers: beliefs added later come first?
!start.
+!start <- +p(a); +p(b); +p(c); .findall(X, p(X), L); .print(L);
   -p(b); +p(b); .findall(Y, p(Y), M); .print(M);
   .stopMAS.
