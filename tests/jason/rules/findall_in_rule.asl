// .findall, .length and .count inside rules
item(a, 3). item(b, 5). item(c, 2).
names(L) :- .findall(N, item(N, _), L).
how_many(C) :- .count(item(_, _), C).
total(T) :- .findall(P, item(_, P), Ps) & sum_list(Ps, T).
sum_list([], 0).
sum_list([H|R], S) :- sum_list(R, S1) & S = S1 + H.
long(L) :- names(Ns) & .length(Ns, L).
!start.
+!start <- ?names(L); ?how_many(C); ?total(T); ?long(N); .print(L, " ", C, " ", T, " ", N); .stopMAS.
