// Terms, beliefs, rules and intention frames as the compiled build makes them (extension
// types: Struct, LVar, Frame, Intention, BeliefBase, CompiledRule): equality and order of
// structs with annotations, sets of them, a belief's sources merged and removed, a rule's
// answers through recursion, a sub-goal's bindings joined back, a failed goal's undone.
// Recorded from Jason 3.2.2 (../shared/jason/run-jason). Note: p(1, a)[x] = p(1, a) fails there
// (a term's annotations must be among the other's), so "but unify" is not printed.
// expect: annotation order: equal
// expect: annotations count in ==
// expect: union [f(1)[s],g(2),h(3)]
// expect: intersection [f(1),h(3)]
// expect: difference [f(1),h(3)]
// expect: sorted [3,"s",a(1),a(1)[z],b(1),b(2)]
// expect: member binds 7
// expect: seen [2,1]
// expect: count seen(1) 2
// expect: one source left
// expect: after -+ [9,1]
// expect: rule [4,3,2,1]
// expect: sub-goal bound v(5,[5,5])
// expect: pair v(5,[5,5]) v(5,[5,5])
// expect: unbound again
// expect: after failure handled
// belief: seen(9)[source(self)]
// absent: seen(2)

!start.

count_down(0, []).
count_down(N, [N | R]) :- N > 0 & count_down(N - 1, R).

+!start <-
    if (p(1, a)[x, y] == p(1, a)[y, x]) { .print("annotation order: equal") };
    if (p(1, a)[x] \== p(1, a)) { .print("annotations count in ==") };
    if (p(1, a)[x] = p(1, a)) { .print("but unify") };
    .union([f(1)[s], g(2), f(1)[s]], [g(2), h(3)], U); .print("union ", U);
    .intersection([f(1), g(2), h(3)], [h(3), f(1)], I); .print("intersection ", I);
    .difference([f(1), g(2), h(3)], [g(2)], D); .print("difference ", D);
    .sort([b(2), a(1)[z], b(1), "s", 3, a(1)], S); .print("sorted ", S);
    if (.member(f(X)[s], [g(1), f(7)[s, t]])) { .print("member binds ", X) };
    +seen(1)[source(a)]; +seen(1)[source(b)]; +seen(2);
    .findall(W, seen(W), Ws); .print("seen ", Ws);
    .count(seen(1)[source(_)], C1); .print("count seen(1) ", C1);
    -seen(1)[source(a)];
    if (seen(1)[source(b)] & not seen(1)[source(a)]) { .print("one source left") };
    -+seen(9);
    .findall(W2, seen(W2), Ws2); .print("after -+ ", Ws2);
    ?count_down(4, L); .print("rule ", L);
    !fill(Out); .print("sub-goal bound ", Out);
    !pair(A, B); .print("pair ", A, " ", B);
    !try(T); .print("after failure ", T);
    .stopMAS.

+!fill(v(K, [K, K])) <- K = 5.

+!pair(X, Y) <- !fill(X); Y = X.

+!try(R) <- R = bound; .fail.
-!try(R) <- if (.ground(R)) { .print("still bound ", R) } else { .print("unbound again") }; R = handled.
