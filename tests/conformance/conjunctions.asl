// Conjunctions in contexts and tests backtrack into earlier conjuncts (compiled as one
// loop per literal, not generators): the first solution in belief order wins.
// expect: pair 2 20
// expect: triple 3 30 c
// expect: rule 2 b
// expect: context 3
// expect: none
// expect: annotated 2
// pyagentspeak: same in any order

n(1). n(2). n(3).
v(2, 20). v(3, 30).
w(30, c).
big(X) :- n(X) & X > 1.
tag(2, b).
m(1)[kind(a)]. m(2)[kind(b)].

!start.

+!start <-
    if (n(X) & v(X, Y) & Y < 25) { .print("pair ", X, " ", Y) };
    if (n(A) & v(A, B) & w(B, C)) { .print("triple ", A, " ", B, " ", C) };
    if (big(R) & tag(R, T)) { .print("rule ", R, " ", T) };
    !pick;
    if (n(Z) & Z > 5 & v(Z, _)) { .print("wrong") } else { .print("none") };
    if (m(K)[kind(b)] & n(K)) { .print("annotated ", K) }.

+!pick : n(P) & v(P, Q) & Q > 25 <- .print("context ", P).
