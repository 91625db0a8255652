// the code(...) annotation of a failure event
!start.
+!start <- !g(3); .stopMAS.
+!g(N) <- X = N + 1; X > 10; .print("never").
-!g(N)[code(C), error(E)] <- .print(N, " ", E, " ", C).
