// nested if inside while
n(0).
!start.
+!start <- while (n(N) & N < 6) {
     if (N mod 2 == 0) { if (N == 4) { .print(N, " even four") } else { .print(N, " even") } }
     else { .print(N, " odd") };
     -+n(N + 1)
   };
   .stopMAS.
