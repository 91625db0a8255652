// .belief tests a belief without rules
b(1).
r(X) :- b(X).
!start.
+!start <- if (.belief(b(X))) { .print("belief b ", X) };
   if (.belief(r(_))) { .print("?") } else { .print("rules are not beliefs") };
   .stopMAS.
