// rules over rules, .setof of a disjunction, .count, negation, .nth enumerating its index, .type, .max and .sort of mixed terms
p(1). p(2). p(3).
q(X) :- p(X) & X > 1.
r(X, Y) :- q(X) & q(Y) & X < Y.
!start.
+!start <- .findall(X-Y, r(X, Y), L); .print(L);
   .setof(X, p(X) | q(X), S); .print(S);
   .count(q(_), C); .print(C);
   if (not p(4) & p(_)) { .print("neg ok") };
   .nth(N, [a,b,c], b); .print(N);
   .findall(I-E, .nth(I, [x,y], E), NL); .print(NL);
   .type(foo(1), T1); .type("s", T2); .type(1.5, T3); .type([1], T4); .print(T1, T2, T3, T4);
   .max([3, "a", b, f(1)], M); .print(M);
   .sort([b, "a", 3, f(2), [1], 1.5, X0], SL); .print(SL);
   .stopMAS.
