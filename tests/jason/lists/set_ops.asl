// .union, .intersection, .difference
!start.
+!start <- .union([1,3,2], [4,2], U); .print(U);
   .intersection([1,3,2,4], [4,2,7], I); .print(I);
   .difference([1,3,2,4], [4,2], D); .print(D);
   .stopMAS.
