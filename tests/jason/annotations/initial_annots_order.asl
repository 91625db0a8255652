// initial beliefs' annotations sorted; for over source(S); two annotation variables take different annotations
c(1)[z, y, source(bob)].
c(2)[b, a].
!start.
+!start <- .findall(c(X)[A], c(X)[A], L); .print(L); .print("c2 ", c(2)[q, p]);
   for (c(X)[source(S)]) { .print(X, " from ", S) };
   ?c(1)[A1, A2]; .print(A1, " ", A2);
   .stopMAS.
