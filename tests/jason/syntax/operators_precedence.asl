// precedence of & | not in contexts
a. b.
!start.
+!start <- if (a & b | c) { .print(one) };
   if (not c & a) { .print(two) };
   if (not (a & c)) { .print(three) };
   if (c & a | b) { .print(four) };
   X = 1 + 2 * 3 - 4 / 2; .print(X);
   .stopMAS.
