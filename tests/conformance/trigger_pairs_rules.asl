// Triggers of two variables (bound into the plan's slots at once, unrolled) and rules of no
// arguments (called without a head to match): ground goals, a goal's variable bound by its
// plan and back in the caller, the same variable in both places, nested terms, a rule of no
// arguments true, false, through a second clause, inside another, under not.
// Recorded from Jason 3.2.2 (../shared/jason/run-jason trigger_pairs_rules.asl).
// expect: ground pair
// expect: ground pair
// expect: bound 2
// expect: out 10
// expect: then B 3
// expect: same var 3
// expect: nested 4 5
// expect: swapped b a
// expect: both, first c above one 2
// expect: never is false
// expect: picked 2
// expect: chose 2

flag(1).
c(1).
c(2).
c(3).
ready :- flag(1).
never :- flag(2).
ok :- never.
ok :- c(X) & X > 2.
both :- ready & ok.

!start.

+!start <-
    !pair(1, 2);
    !pair(1, X); .print("bound ", X);
    !pair(5, V); .print("out ", V);
    !same(Y, Y); .print("same var ", Y);
    !nest(f(Z), [Z, W]); .print("nested ", Z, " ", W);
    !swap(a, b);
    !ctx;
    !neg;
    !choose(_, N); .print("chose ", N).

+!pair(1, 2) <- .print("ground pair").
+!pair(A, B) : A == 5 <- B = 10.

+!same(A, B) <- A = 3; .print("then B ", B).

+!nest(A, B) <- A = f(4); B = [4, 5].

+!swap(A, B) <- .print("swapped ", B, " ", A).

+!ctx : both & c(X) & X > 1 <- .print("both, first c above one ", X).
+!ctx <- .print("not both").

+!neg : not never & not (ready & never) <- .print("never is false").
+!neg <- .print("wrong").

+!choose(S, A) : ready & c(A) & A > 1 <- .print("picked ", A).
