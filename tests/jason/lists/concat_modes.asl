// .concat: lists, strings, terms as their text
!start.
+!start <- .concat([1], [2, 3], [], L); .print(L);
   .concat("a", b, 1, f(x), S); .print(S);
   .concat("x", [1, 2], T); .print(T);
   if (.concat("a", "b", "ab")) { .print("ab") };
   if (.concat(a, b, ab)) { .print("atoms ab") };
   .concat([a], [b], [a|R]); .print(R);
   .stopMAS.
