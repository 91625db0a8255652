// +b / -b / !g with arguments of every kind: numbers, atoms, strings, structures, lists,
// variables bound to structures (the fast paths build argument tuples straight from the
// frame; structures and lists go through unification).
// expect: after add: 5 yes
// expect: after del: 0
// expect: goal f(2) [3] x s
// expect: bound 7
// pyagentspeak: same

!start.

+!start <-
    X = f(2); L = [1, 2];
    +a(1); +a(X); +a(g); +a(L); +a("s");
    .count(a(_), N);
    if (a(1) & a(f(2)) & a(g) & a([1, 2]) & a("s")) { .print("after add: ", N, " yes") };
    -a(1); -a(f(2)); -a(g); -a(L); -a("s");
    .count(a(_), M);
    .print("after del: ", M);
    !show(X, [3], x, "s");
    !bind(B); .print("bound ", B).

+!show(A, B, C, D) <- .print("goal ", A, " ", B, " ", C, " ", D).
+!bind(7).
