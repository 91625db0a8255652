// a recursive rule: ancestors
parent(ann, bob). parent(bob, cid). parent(cid, dan).
ancestor(X, Y) :- parent(X, Y).
ancestor(X, Y) :- parent(X, Z) & ancestor(Z, Y).
!start.
+!start <- .findall(Y, ancestor(ann, Y), L); .print(L);
   .findall(X, ancestor(X, dan), M); .print(M);
   if (ancestor(dan, _)) { .print("dan has descendants") } else { .print("dan has none") };
   .stopMAS.
