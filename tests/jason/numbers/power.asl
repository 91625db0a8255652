// ** and operator precedence
!start.
+!start <- .print(2 ** 10); .print(2 ** 0.5); .print(2 + 3 * 4); .print((2 + 3) * 4);
   .print(-2 ** 2); .print(2 ** 3 ** 2); .print(10 - 4 - 3); .print(100 / 10 / 5);
   .stopMAS.
