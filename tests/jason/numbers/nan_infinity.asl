// NaN and Infinity: comparisons, X == X for NaN, big powers, math.max/min/sum, long integers
!start.
+!start <- X = 0.1 + 0.2; .print(X); if (X == 0.3) { .print(eq) } else { .print(neq) };
   Y = 1/0; if (Y > 1000000) { .print(big) }; Z = 0/0; if (Z == Z) { .print(same) } else { .print(nan) };
   .print(-1/0, " ", 5 mod 0, " ", 2 ** 1000, " ", 2.0 ** 2000);
   .print(math.max(3, 2.5), " ", math.min([4, 2.5, 3]), " ", math.sum([1, 2.5]));
   .print(123456789012345678); .print(0.000123); .print(100.0); .print(1.0E7 + 0.5);
   .stopMAS.
