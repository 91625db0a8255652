// unification of annotated terms with =
!start.
+!start <- X = b(1)[a, b];
   if (X = b(1)) { .print("b(1) unifies") };
   if (X = b(1)[a]) { .print("[a] unifies") };
   if (b(1)[a] = X) { .print("X unifies with [a]") };
   if (X = b(1)[c]) { .print("[c] unifies") } else { .print("[c] does not") };
   if (X == b(1)[b, a]) { .print("== with other order") } else { .print("== fails") };
   .stopMAS.
