// .ground, .literal, .structure, .atom
!start.
+!start <- if (.literal(f(x))) { .print("f(x) literal") };
   if (.literal(1)) { .print("?") } else { .print("1 not literal") };
   if (.structure([1])) { .print("[1] structure") } else { .print("[1] not structure") };
   if (.ground([1, f(a)])) { .print("ground list") };
   .stopMAS.
