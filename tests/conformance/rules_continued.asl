// Rules asked in plan contexts and tests, their answers taken one after another as the rest
// of the formula needs them (the runtime calls them as continuations, at most 8 deep, then
// through generators): backtracking into a rule, facts and rules of one predicate in source
// order, recursion deeper than 8 before more conditions, a proof whose size is far beyond its
// depth, annotations on a rule's answer.
// Recorded from Jason 3.2.2 (../shared/jason/run-jason rules_continued.asl).
// expect: grand dan
// expect: first above one 2
// expect: in order [1,2,4,3]
// expect: deep 12
// expect: fib 89
// expect: twice 2 3
// expect: annotated 4
// expect: tested 232
// expect: no pick above five
// expect: pick 2
// expect: pick 3

parent(alice, bob).
parent(alice, beth).
parent(bob, carl).
parent(beth, dan).
grand(X, Z) :- parent(X, Y) & parent(Y, Z).

p(1).
p(X) :- X = 2.
p(4).
p(X) :- X = 3.

count(0).
count(N) :- N > 0 & count(N - 1).

len([], 0).
len([_ | T], N) :- len(T, M) & N = M + 1.

fib(0, 0).
fib(1, 1).
fib(N, F) :- N > 1 & fib(N - 1, A) & fib(N - 2, B) & F = A + B.

pick(X) :- p(X) & X > 1 & X < 4.
twice(X, Y) :- pick(X) & pick(Y) & X < Y.

!start.

+!start : grand(alice, Z) & Z == dan <- .print("grand ", Z); !order.
+!order : p(X) & X > 1 <- .print("first above one ", X); !all.
+!all <- .findall(X, p(X), L); .print("in order ", L); !deep.
+!deep : count(30) & len([a, b, c, d, e, f, g, h, i, j, k, l], N) & N > 10 <- .print("deep ", N); !big.
+!big : fib(11, F) & F > 50 <- .print("fib ", F); !nested.
+!nested : twice(X, Y) <- .print("twice ", X, " ", Y); !annotated.
+!annotated : p(X)[source(self)] & X > 3 <- .print("annotated ", X); !tested.
+!tested <- ?twice(A, B); ?len([x, y], M); .print("tested ", A, B, M); !none.
+!none : pick(X) & X > 5 <- .print("wrong ", X).
+!none <- .print("no pick above five"); !redo.
+!redo <- for (pick(X)) { .print("pick ", X) }.
