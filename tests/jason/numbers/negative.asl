// negative numbers and unary minus
!start.
+!start <- X = 5; Y = -X; .print(Y); .print(- 3 + 1); .print(3 - -2); .print(-(2 + 3)); .print(f(-1));
   .stopMAS.
