// the type tests on bound and free variables
!start.
+!start <- X = f(Y); if (.structure(X)) { .print("structure") };
   if (.literal(Y)) { .print("?") } else { .print("free is no literal") };
   if (.atom(b[x])) { .print("?") } else { .print("b[x] is no atom") };
   if (.literal([a])) { .print("?") } else { .print("a list is no literal") };
   if (.string("")) { .print("empty string") };
   if (.number(-3.5)) { .print("number") };
   if (.list([])) { .print("[] list") };
   if (.ground(f(a, [b, "c"]))) { .print("ground") };
   .stopMAS.
