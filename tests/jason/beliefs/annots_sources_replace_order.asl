// annotations added and removed, sources, -+ and +> +< order
!start.
+!start <- +b(1); +b(2)[a]; +b(2)[b]; .findall(X, b(X)[A], L); .print(L);
   ?b(2)[a, b]; .print("has both");
   -b(2)[a]; .findall(X, b(X)[a], La); .print(La);
   +c(1)[source(x)]; +c(1)[source(y)]; -c(1)[source(x)];
   .findall(S, c(1)[source(S)], Ls); .print(Ls);
   -+d(1); -+d(2); .findall(V, d(V), Ld); .print(Ld);
   +e(1); +>e(2); +<e(0); .findall(V, e(V), Le); .print(Le);
   .stopMAS.
