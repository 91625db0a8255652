// set operations with duplicates and unsorted input
!start.
+!start <- .union([c, a, a], [b, a], U); .print(U);
   .intersection([c, a, a, b], [a, c], I); .print(I);
   .difference([c, a, a, b], [a], D); .print(D);
   .stopMAS.
