// .max and .min over mixed terms
!start.
+!start <- .max([1, "a", b, f(1), [2]], M); .print(M); .min([1, "a", b, f(1), [2]], N); .print(N);
   .max([1, 2.5, 2], F); .print(F);
   .stopMAS.
