// for over .member and over a belief query
b(1). b(2). b(3).
!start.
+!start <- for (.member(X, [a, b, c])) { .print(X) };
   for (b(Y)) { .print("b ", Y) };
   for (b(Y) & Y > 1) { .print("big b ", Y) };
   .stopMAS.
