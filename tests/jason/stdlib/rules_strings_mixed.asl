// rules with recursion, lists, strings
fact(0, 1).
fact(N, F) :- N > 0 & fact(N-1, F1) & F = N * F1.
len([], 0).
len([_|T], N) :- len(T, M) & N = M + 1.
!start.
+!start <- ?fact(5, F); .print("fact ", F);
   ?len([a,b,c], L); .print("len ", L);
   .concat("ab", "cd", S); .length(S, SL); .print(S, " ", SL);
   .term2string(T, "foo(bar, 3)"); .print(T);
   .substring("b", "abcb", P); .print(P);
   for (.member(X, [3,1,2])) { .print(X) };
   .findall(X, .member(X, [c,a,b]), Xs); .sort(Xs, Ys); .print(Ys);
   .stopMAS.
