// fibonacci with a rule and with a recursive plan
fib(0, 0). fib(1, 1).
fib(N, F) :- N > 1 & fib(N-1, A) & fib(N-2, B) & F = A + B.
!start.
+!start <- ?fib(12, F); .print(F); !fibp(12, 0, 1); .stopMAS.
+!fibp(0, A, _) <- .print("plan: ", A).
+!fibp(N, A, B) <- !fibp(N-1, B, A+B).
