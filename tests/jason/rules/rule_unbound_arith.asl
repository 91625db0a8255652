// a rule with a comparison on an unbound variable just fails
lt(X) :- X < 3.
!start.
+!start <- if (lt(1)) { .print("1 < 3") };
   if (lt(5)) { .print("5 < 3") } else { .print("not 5 < 3") };
   .stopMAS.
