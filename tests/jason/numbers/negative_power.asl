// powers with negative and fractional exponents
!start.
+!start <- .print(2 ** -1); .print(4 ** 0.5); .print(10 ** 3); .print(10 ** 20); .print(0.5 ** 2); .stopMAS.
