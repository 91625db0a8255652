// a failure plan that retries the goal
tries(0).
!start.
+!start <- !g; .print("done"); .stopMAS.
+!g : tries(N) & N < 2 <- -+tries(N + 1); .print("try ", N); .fail.
+!g <- .print("success").
-!g <- .print("retrying"); !g.
