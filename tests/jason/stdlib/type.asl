// .type
!start.
+!start <- for (.member(X, [a, 1, 1.5, "s", [1], f(x), ~n])) { .type(X, T); .print(X, " ", T) };
   .stopMAS.
