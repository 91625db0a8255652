// numbers as belief arguments: 1 and 1.0 are the same
!start.
+!start <- +b(1); +b(1.0); .count(b(_), N); .print(N); ?b(X); .print(X);
   if (b(1.0)) { .print("b(1.0) holds") };
   .stopMAS.
