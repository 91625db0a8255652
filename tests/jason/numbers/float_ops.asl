// float arithmetic results
!start.
+!start <- .print(0.1 + 0.2); .print(1.5 * 2); .print(10 / 4); .print(2.5 - 0.5); .print(1.1 * 1.1);
   .print(1.0 / 3.0); .print(3 * 0.1);
   .stopMAS.
