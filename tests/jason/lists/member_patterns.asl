// .member with patterns: every solution, bindings of each
!start.
+!start <- .findall(X, .member(p(X, b), [p(1, a), p(2, b), q(3, b), p(4, b)]), L); .print(L);
   .findall(Y, .member([_, Y], [[1, 2], [3], [4, 5]]), M); .print(M);
   if (.member(z, [])) { .print("?") } else { .print("nothing in []") };
   .member(p(A, B), [p(1, 2)]); .print(A, B);
   .stopMAS.
