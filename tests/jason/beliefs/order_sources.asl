// belief order after +b, -+b; sources in order; strong negation printed
b(1). b(2).
!start.
+!start <- +b(3); +b(0); .findall(X, b(X), L); .print(L); -+b(9); .findall(X, b(X), L2); .print(L2);
   +b(5)[source(ann)]; +b(5); ?b(5)[source(S)]; .print(S); .findall(S2, b(5)[source(S2)], L3); .print(L3);
   -b(5)[source(ann)]; .findall(b(X)[A], b(X)[A], L4); .print(L4);
   +~b(1); ?~b(Q); .print(Q); .print(~b(1)[x]);
   .stopMAS.
