// explicit sources on initial beliefs are kept; a belief without one gets source(self)
b(1)[source(percept)].
b(2)[source(bob)].
b(3).
b(4)[tag].
!start.
+!start <- .findall(p(X,S), b(X)[source(S)], L); .print(L);
   .findall(A, b(4)[A], M); .print(M);
   .stopMAS.
