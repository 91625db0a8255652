// the first applicable plan in source order is chosen
!g(5).
+!g(X) : X > 10 <- .print("big").
+!g(X) : X > 3 <- .print("medium"); !h.
+!g(X) <- .print("any").
+!h <- .print("h"); .stopMAS.
