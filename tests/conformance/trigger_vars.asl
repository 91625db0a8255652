// Plan selection binds the trigger's variables; a plan whose context fails leaves nothing
// bound, not even the goal's own variables (Jason's unifier is per option).
// expect: same
// expect: different
// expect: picked 2
// expect: second got V unbound
// expect: nested f(3)
// pyagentspeak: same

!start.

+!start <-
    !eq(1, 1); !eq(1, 2);
    !pick(P); .print("picked ", P);
    !pick2(V);
    !wrap(f(3)).

+!eq(X, X) <- .print("same").
+!eq(_, _) <- .print("different").

+!pick(R) : false <- R = 1.
+!pick(R) <- R = 2.

+!pick2(1) : false <- .print("wrong").
+!pick2(W) <- if (.ground(W)) { .print("second got V bound") } else { .print("second got V unbound") }.

+!wrap(T) <- !show(T).
+!show(f(N)) <- .print("nested f(", N, ")").
