// annotation patterns: each variable a different annotation, pairs enumerated, a tail, one-way subset unification, == ignores order
!start.
+!start <- +p[a,b,c]; +p[d]; ?p[X,Y,Z]; .print(X,Y,Z); .findall(X, p[X], L); .print(L);
   .findall([X,Y], p[X,Y], L2); .print(L2); ?p[source(Q)|R]; .print(Q, R);
   X1 = p[z,a]; .print(X1); if (p[a] = p[a,b]) { .print(sub) }; if (not (p[a,b] = p[a])) { .print(notsup) };
   if (p[b,a] == p[a,b]) { .print(eqord) };
   .stopMAS.
