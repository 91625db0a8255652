// annotations in Jason's order: numbers, strings, lists, then atoms and structures; source(S) binds the first source, [P,Q] enumerates pairs
!start.
+!start <- +b(1)[source(zed), 10, 9, "x", f(2), f(1,1), g, ~n, [1]]; ?b(1)[source(S)]; .print(S);
   .findall(A, b(1)[A], L); .print(L); ?b(1)[|R]; .print(R);
   .findall([P,Q], b(1)[P,Q], L2); .length(L2, N); .print(N);
   ?b(X)[g, Y]; .print(X, Y);
   .stopMAS.
