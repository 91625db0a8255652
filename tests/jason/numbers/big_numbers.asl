// large numbers
!start.
+!start <- .print(2 ** 40); .print(1000000 * 1000000); .print(123456789012); .print(2 ** 64);
   .print(9007199254740993);
   .stopMAS.
