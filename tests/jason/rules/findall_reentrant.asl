// .findall and .count called again while they gather: inside their own formula, and from a
// rule that recurses through the same .findall
p(1). p(2). p(3).
q(1, a). q(1, b). q(2, c).
sub(0, []).
sub(N, L) :- N > 0 & .findall(X, (p(X) & X <= N), Xs) & sub(N - 1, L0) & L = [Xs | L0].
pairs(X, L) :- .findall(Y, q(X, Y), L).
!start.
+!start <-
    .findall([X, L], p(X) & pairs(X, L), R);
    .print(R);
    ?sub(3, S);
    .print(S);
    .count(p(_) & q(_, _), C);
    .print(C);
    .findall(N, sub(2, _) & p(N), Ns);
    .print(Ns);
    .findall(K, p(P) & .count(q(P, _), K), Ks);
    .print(Ks);
    .stopMAS.
