// if/elif/else, while with bindings, arithmetic and comparisons
!start.
+!start <- X = 7;
   if (X > 10) { .print(big) } elif (X > 5) { .print(medium) } else { .print(small) };
   I = 0; 
   while (I < 3) { .print("i ", I); I = I + 1 };
   .print(7 div 2, " ", 7 mod 2, " ", 7 / 2, " ", 2 ** 3, " ", -7 div 2, " ", -7 mod 2);
   .print(math.sqrt(16), " ", math.abs(-3), " ", math.round(2.5), " ", math.floor(-1.5));
   if (a == a & not (1 == 2)) { .print(ok) };
   .stopMAS.
