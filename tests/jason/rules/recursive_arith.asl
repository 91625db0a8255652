// recursive rules with arithmetic in their arguments; big factorials print as doubles
fact(0, 1).
fact(N, F) :- N > 0 & fact(N - 1, F1) & F = N * F1.
fib(0, 0). fib(1, 1).
fib(N, F) :- N > 1 & fib(N - 1, A) & fib(N - 2, B) & F = A + B.
!start.
+!start <- ?fact(5, F); .print(F); ?fib(10, G); .print(G); .findall(X, fact(3, X), L); .print(L);
   ?fact(20, H); .print(H); ?fact(25, I); .print(I);
   .stopMAS.
