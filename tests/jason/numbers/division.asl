// / div mod
!start.
+!start <- .print(7 / 2); .print(6 / 2); .print(7 div 2); .print(-7 div 2); .print(7 mod 3);
   .print(-7 mod 3); .print(7 mod -3); .print(1 / 0.5);
   .stopMAS.
