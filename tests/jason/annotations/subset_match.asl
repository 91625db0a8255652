// a query's annotations must be a subset of the belief's
b(1)[a, b].
b(2)[a].
!start.
+!start <- .findall(X, b(X)[a], L1); .print(L1);
   .findall(X, b(X)[a, b], L2); .print(L2);
   .findall(X, b(X)[c], L3); .print(L3);
   .findall(X, b(X), L4); .print(L4);
   .stopMAS.
