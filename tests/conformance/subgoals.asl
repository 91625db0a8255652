// Sub-goals return values through unbound arguments; recursion; !! starts a new intention.
// pyagentspeak: same
// expect: fact 120
// expect: sum [1,2,3] = 6
// expect: pair 1 2
// expect: spawned 7

!start.

+!start <- !fact(5, F); .print("fact ", F); !sum([1, 2, 3], S); .print("sum [1,2,3] = ", S);
    !pair(A, B); .print("pair ", A, " ", B); !!spawn(7).

+!fact(0, 1).
+!fact(N, F) : N > 0 <- !fact(N - 1, F1); F = N * F1.

+!sum([], 0).
+!sum([H|T], S) <- !sum(T, S1); S = H + S1.

+!pair(1, 2).

+!spawn(X) <- .print("spawned ", X).
