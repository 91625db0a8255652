// .setof and .findall with templates, duplicates and conjunctions
v(3, a). v(1, b). v(3, a). v(2, a).
!start.
+!start <- .setof(p(X, Y), v(X, Y), S); .print(S);
   .setof(Y, v(_, Y), T); .print(T);
   .findall(X, v(X, a) & X > 2, F); .print(F);
   .setof(f(X), v(X, _) & X < 3, G); .print(G);
   .count(v(3, _), N); .print(N);
   .stopMAS.
