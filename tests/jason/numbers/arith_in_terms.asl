// arithmetic in terms is evaluated when the term is built
!start.
+!start <- X = f(1 + 2, 3 * 2); .print(X); +b(2 * 5); ?b(B); .print(B); !g(4 - 1); .stopMAS.
+!g(N) <- .print("g ", N).
