// list patterns in queries, .findall over .member, .count of .member
p([1,2,3]).
!start.
+!start <- ?p([H|T]); .print(H, T); ?p([_,X|_]); .print(X); ?p(L); .length(L, N); .print(N);
   .findall(Y, .member(Y, L), Ys); .print(Ys); .findall(f(Y), .member(Y, [a,b]) , Fs); .print(Fs);
   .count(.member(_, L), C); .print(C);
   .stopMAS.
