// Beliefs, rules, not, strong negation, arithmetic, strings, lists and unification.
// pyagentspeak: same
// expect: sum 7
// expect: div 3 mod 1 real 3.5 neg -2 pow 8
// expect: grand carl
// expect: grand dan
// expect: no child of carl
// expect: cold
// expect: head 1 tail [2,3]
// expect: eq
// expect: text "quoted" in f("x",1)
// belief: parent(alice,bob)[source(self)]

parent(alice, bob).
parent(bob, carl).
parent(carl, dan).
~warm.
grandparent(X, Z) :- parent(X, Y) & parent(Y, Z).

!start.

+!start <-
    X = 3 + 4;
    .print("sum ", X);
    .print("div ", 7 div 2, " mod ", 7 mod 2, " real ", 7 / 2, " neg ", 0 - 2, " pow ", 2 ** 3);
    for (grandparent(alice, G) | grandparent(bob, G)) { .print("grand ", G) };
    if (not parent(carl, _) & true) { .print("wrong") } else { .print("no child of carl") };
    if (~warm) { .print("cold") };
    [H|T] = [1, 2, 3];
    .print("head ", H, " tail ", T);
    if (f(A, b) = f(a, B) & A == a & B == b & A \== B) { .print("eq") };
    .print("text ", "\"quoted\"", " in ", f("x", 1)).
