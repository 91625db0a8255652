// .max and .min
!start.
+!start <- .max([3, 7, 1], M); .print(M); .min([3, 7, 1], N); .print(N);
   .max([b, a, c], A); .print(A); .min([f(2), f(1)], F); .print(F);
   .stopMAS.
