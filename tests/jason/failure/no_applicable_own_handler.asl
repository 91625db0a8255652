// a -!g plan for the goal that had no applicable plan
!start.
+!start <- !g(1); .print("after g"); .stopMAS.
+!g(X) : X > 5 <- .print("big").
-!g(X)[error(E)] <- .print("g(", X, ") failed: ", E).
