// a tail-recursive goal binds its caller's variable through every level
!start.
+!start <- !count(0, R); .print("R = ", R); !sum([1, 2, 3, 4], 0, S); .print("S = ", S); .stopMAS.
+!count(N, R) : N < 5 <- !count(N + 1, R).
+!count(N, N).
+!sum([], Acc, Acc).
+!sum([H | T], Acc, S) <- !sum(T, Acc + H, S).
