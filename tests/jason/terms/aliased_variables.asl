// Two free variables unified (Y = Z) stay two for ==, as Jason applies its unifier: false until one
// has a value; inside terms and lists, along a chain (A = B, B = C), and for trigger variables
// posted as the one variable (!same(W, W)).
!start.

+!start <-
    if (Y == Z) { .print("fresh Y == Z") } else { .print("fresh Y differs Z") };
    Y = Z;
    .print(Y, " ", Z, " ", f(Y, Z));
    if (Y == Z) { .print("aliased Y == Z") } else { .print("aliased Y differs Z") };
    if (Y \== Z) { .print("aliased, differs holds") } else { .print("aliased, differs fails") };
    if (Y == Y) { .print("Y == Y") } else { .print("Y differs Y") };
    if (f(Y, a) == f(Z, a)) { .print("f(Y,a) == f(Z,a)") } else { .print("f(Y,a) differs f(Z,a)") };
    if ([Y] == [Z]) { .print("[Y] == [Z]") } else { .print("[Y] differs [Z]") };
    A = B; B = C;
    if (A == C) { .print("chain A == C") } else { .print("chain A differs C") };
    C = 7;
    if (A == 7) { .print("chain bound: A == 7") } else { .print("chain bound: A differs 7") };
    Y = 3;
    if (Y == Z) { .print("bound Y == Z") } else { .print("bound Y differs Z") };
    if (f(Y, a) == f(Z, a)) { .print("bound f(Y,a) == f(Z,a)") } else { .print("bound f(Y,a) differs f(Z,a)") };
    !same(W, W);
    !same(4, 4);
    !same(U, V);
    .print(done);
    .stopMAS.

+!same(P, Q) <-
    if (P == Q) { .print("same: P == Q") } else { .print("same: P differs Q") }.
