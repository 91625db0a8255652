// annotations are kept sorted, whatever order they were written in
!start.
+!start <- +b(1)[z, a, m(2), m(1), "s", 3]; ?b(1)[|A]; .print(A);
   .findall(X, b(1)[X], L); .print(L);
   .stopMAS.
