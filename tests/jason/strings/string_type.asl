// .string, .atom, .term2string on atoms and strings
!start.
+!start <- if (.string("a")) { .print("\"a\" is a string") };
   if (.atom(a)) { .print("a is an atom") };
   if (.string(a)) { .print("?") } else { .print("a is not a string") };
   if (.atom("a")) { .print("?") } else { .print("\"a\" is not an atom") };
   .stopMAS.
