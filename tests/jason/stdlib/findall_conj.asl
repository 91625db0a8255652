// .findall with conjunctions, rules and nested findall
b(1). b(2). b(3).
c(2). c(3).
both(X) :- b(X) & c(X).
!start.
+!start <- .findall(X, b(X) & c(X), L1); .print(L1);
   .findall(X, both(X), L2); .print(L2);
   .findall(f(X, L), b(X) & .findall(Y, c(Y) & Y > X, L), L3); .print(L3);
   .findall(X, b(X) & not c(X), L4); .print(L4);
   .stopMAS.
