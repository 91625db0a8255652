// list processing rules: membership, append, last
app([], L, L).
app([H|T], L, [H|R]) :- app(T, L, R).
last([X], X).
last([_|T], X) :- last(T, X).
!start.
+!start <- ?app([1,2], [3,4], L); .print(L); ?last([a,b,c], X); .print(X);
   .findall(p(A,B), app(A, B, [1,2]), S); .print(S);
   .stopMAS.
