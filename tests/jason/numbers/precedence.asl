// arithmetic precedence and associativity (** to the right, - and / to the left)
!start.
+!start <- .print(1 + 2 * 3, " ", (1 + 2) * 3, " ", 2 ** 3 ** 2, " ", -2 ** 2, " ", 10 - 3 - 2, " ", 100 / 10 / 5);
   .print(7 div 2 * 2, " ", 7 mod 2 + 1, " ", 2 * 3 mod 4);
   X = 5; if (X > 3 & X < 10) { .print(in) }; if (X < 3 | X > 4) { .print(or) };
   .print(1 == 1.0, " ", 3 > 2.5);
   .stopMAS.
