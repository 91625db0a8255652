// numbers converted to strings
!start.
+!start <- .term2string(3.0, A); .print(A); .term2string(1.0E-5, B); .print(B);
   .concat("n=", 2.5, C); .print(C); .term2string(7 / 2, D); .print(D);
   .stopMAS.
