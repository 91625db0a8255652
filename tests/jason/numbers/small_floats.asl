// small and large floats printed
!start.
+!start <- .print(0.0001); .print(0.001 * 0.1); .print(1.5E10); .print(1.5E-10); .print(123.456); .print(-1.0E-3);
   .print(1000000.5); .print(9999999.0); .print(0.1 * 3);
   .stopMAS.
