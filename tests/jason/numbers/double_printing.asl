// numbers printed as Jason's doubles inside lists and structures, div and mod, Java's Math.round
!start.
+!start <- .print([1.5, 2.0, -0.0, 1e3, 0.5e-3, 12345678.5, 7 div 2, 7 / 2, -7 mod 3, 7.5 mod 2]);
   .print(f(1.0E10, 3.25E-7)); X = 10 ** 15; .print(X); Y = 10 ** 16 + 1; .print(Y);
   .print(math.round(-2.5), " ", math.round(2.5), " ", math.floor(-1.5), " ", math.ceil(-1.5));
   .print(math.sqrt(2), " ", math.abs(-0.0), " ", 1.0 * 3, " ", 2 ** 0.5, " ", 1 / 3 * 3);
   .concat("n=", 2.5, " m=", 3.0, S); .print(S);
   .stopMAS.
