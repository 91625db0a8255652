// comparing structures with < and >
!start.
+!start <- if (f(1) < f(2)) { .print("f(1) < f(2)") }; if (a < b) { .print("a < b") };
   if (f(1) < g(0)) { .print("f(1) < g(0)") } else { .print("not f(1) < g(0)") };
   if (1 < a) { .print("1 < a") } else { .print("not 1 < a") };
   .stopMAS.
