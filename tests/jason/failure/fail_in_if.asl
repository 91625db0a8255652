// .fail inside an if branch
!start.
+!start <- !g(1); !g(2); .stopMAS.
+!g(N) <- if (N == 2) { .fail }; .print("g ", N, " ok").
-!g(N) <- .print("g ", N, " failed").
