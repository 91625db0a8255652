// .findall, .setof and .count: solutions gathered in order, called again while they gather
// (inside their own formula, and from a rule that recurses through the same .findall), over a
// recursion deeper than the runtime's continued calls, with no solution, and .count in a context.
// Recorded from Jason 3.2.2 (../shared/jason/run-jason gathering.asl).
// expect: all [1,2,3]
// expect: set [1,2,3]
// expect: count 1
// expect: nested [[1,[a,b]],[2,[c]],[3,[]]]
// expect: reentrant [[1,2,3],[1,2],[1]]
// expect: deep [12,8,4]
// expect: none []
// expect: product 9
// expect: counted in a context

n(3). n(1). n(2). n(3).
q(1, a). q(1, b). q(2, c).
down(0, []).
down(N, [N | L]) :- N > 0 & down(N - 1, L).
deep(L) :- .findall(X, (down(12, D) & .member(X, D) & X mod 4 == 0), L).
sub(0, []).
sub(N, L) :- N > 0 & .findall(X, (n(X) & X <= N), Xs) & sub(N - 1, L0) & L = [Xs | L0].
!start.
+!start <-
    .findall(X, n(X), All);
    .print("all ", All);
    .setof(X, n(X), Set);
    .print("set ", Set);
    .count(n(3), C3);
    .print("count ", C3);
    .findall([X, L], n(X) & .findall(Y, q(X, Y), L), Pairs);
    .print("nested ", Pairs);
    ?sub(3, S);
    .print("reentrant ", S);
    ?deep(D);
    .print("deep ", D);
    .findall(X, n(X) & X > 5, None);
    .print("none ", None);
    .count(q(_, _) & n(_), Both);
    .print("product ", Both);
    !counted.
+!counted : .count(n(_)) >= 3 <- .print("counted in a context").
