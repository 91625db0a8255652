// == and \== compare without binding
!start.
+!start <- if (f(X) == f(X)) { .print("same var") };
   if (f(X) == f(Y)) { .print("?") } else { .print("different vars") };
   if (f(a) \== f(b)) { .print("f(a) \\== f(b)") };
   .print(X);
   .stopMAS.
