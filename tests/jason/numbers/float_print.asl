// floats as Java prints them
!start.
+!start <- .print(3.0); .print(0.1); .print(1.0E-5); .print(0.00001); .print(123456789.0);
   .print(1.0E7); .print(12345678.9); .print(1/3); .print(2/3); .print(-0.5);
   .print(100000.0 * 100); .print(0.001);
   .stopMAS.
