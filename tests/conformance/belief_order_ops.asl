// ++b and +<b add as +b (newest first: queries find them first), +>b adds last (Jason's
// addBelEnd); --b removes as -b. Every form raises the +b / -b event (+v(z)'s plan runs
// before the next step, as under Jason's default intBels=sameFocus).
// expect: added z
// expect: first c
// expect: all [c,b,a,z]
// expect: after [c,a,z]
// belief: gone(b)[source(self)]

!start.

+!start <-
    +v(a); ++v(b); +<v(c); +>v(z);
    ?v(X); .print("first ", X);
    .findall(Y, v(Y), L); .print("all ", L);
    --v(b);
    .findall(Y2, v(Y2), L2); .print("after ", L2).

+v(z) <- .print("added z").
-v(b) <- +gone(b).
