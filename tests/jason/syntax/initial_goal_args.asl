// initial goals with arguments and annotations
!g(1, "two", [3])[urgent].
+!g(A, B, C)[urgent] <- .print(A, B, C); .stopMAS.
