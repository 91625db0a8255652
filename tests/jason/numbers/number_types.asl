// .number and friends
!start.
+!start <- if (.number(3)) { .print("3 number") }; if (.number(3.5)) { .print("3.5 number") };
   if (.number("3")) { .print("?") } else { .print("\"3\" not a number") };
   if (.ground(f(1))) { .print("ground") }; if (.ground(f(_))) { .print("?") } else { .print("not ground") };
   .stopMAS.
