// comparisons
!start.
+!start <- if (2 < 3 & 3 <= 3 & 4 > 3 & 4 >= 4 & 5 \== 6 & 1.5 < 2) { .print("all true") };
   if (2 \== 2.0) { .print("2 \\== 2.0") } else { .print("2 and 2.0 are ==") };
   .stopMAS.
