// arithmetic in a recursive rule
fact(0, 1).
fact(N, F) :- N > 0 & fact(N-1, F1) & F = N * F1.
!start.
+!start <- ?fact(5, F); .print("5! = ", F); ?fact(10, G); .print("10! = ", G); .stopMAS.
