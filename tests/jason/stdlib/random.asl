// .random: only its range is printed (the value varies)
!start.
+!start <- .random(R); if (R >= 0 & R < 1) { .print("in [0,1)") };
   X = math.random(10); if (X >= 0 & X < 10) { .print("math.random in [0,10)") };
   .random([a, b, c], E); if (.member(E, [a, b, c])) { .print("a member") };
   .stopMAS.
