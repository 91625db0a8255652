// .delete: by pattern, by index, by range, on strings
!start.
+!start <- .delete(f(_), [f(1), g(2), f(3)], A); .print(A);
   .delete(1, 3, [a, b, c, d], B); .print(B);
   .delete(0, "hello", C); .print(C);
   .delete(1, 3, "hello", D); .print(D);
   .delete("l", "hello", E); .print(E);
   .delete(9, "hello", F); .print(F);
   .delete(x, [a, b], G); .print(G);
   .delete(2, [1, 2, 2], H); .print(H);
   .stopMAS.
