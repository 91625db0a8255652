// .sort of numbers, atoms, strings, structures and a mix
!start.
+!start <- .sort([3, 1, 2.5, -1], A); .print(A);
   .sort([c, a, b], B); .print(B);
   .sort([f(2), f(1), g(0), a, "s", 3, [1]], C); .print(C);
   .sort([b, a, b, a], D); .print(D);
   .stopMAS.
