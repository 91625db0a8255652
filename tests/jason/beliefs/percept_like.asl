// explicit sources on initial beliefs are kept
b(1)[source(percept)].
b(2)[source(bob)].
b(3).
!start.
+!start <- .findall(X-S, b(X)[source(S)], L); .print(L); .stopMAS.
