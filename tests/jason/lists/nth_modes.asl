// .nth on strings, with a float index, with a free index and a pattern
!start.
+!start <- .nth(1, "abc", C); .print(C);
   .nth(1.7, [a, b, c], D); .print(D);
   .findall(I, .nth(I, [f(1), g(2), f(3)], f(_)), L); .print(L);
   .findall(p(I, X), .nth(I, [f(1), g(2), f(3)], f(X)), P); .print(P);
   if (.nth(0, [a], b)) { .print("?") } else { .print("a is not b") };
   if (.nth(5, [a], _)) { .print("?") } else { .print("out of the list in a condition: false") };
   .findall(Y, .nth(7, [a, b], Y), E); .print(E);
   .stopMAS.
