// set operations on structures, strings and repeated elements
!start.
+!start <- .union([f(2), "b", a, f(1)], [a, "a", f(2)], U); .print(U);
   .intersection([g(1), "x", 3, a], [a, 3, "x", h], I); .print(I);
   .difference([c, b, a, b, c], [b], D); .print(D);
   .union([], [], E); .print(E);
   .difference([1, 2], [1, 2, 3], F); .print(F);
   if (.union([1], [2], [1, 2])) { .print("union checks its result") };
   .stopMAS.
