// facts and rules answer in the belief base's order; +q goes first, +>q last; rule answers carry source(self)
q(X) :- X = r.
q(1).
q(X) :- p(X).
p(a). p(b).
!start.
+!start <- .findall(X, q(X), L); .print(L); +q(9); .findall(X, q(X), L2); .print(L2);
   +>q(last); .findall(X, q(X), L3); .print(L3); ?q(F); .print(F);
   .findall(A, q(1)[A], L4); .print(L4); .count(q(_), N); .print(N);
   .stopMAS.
