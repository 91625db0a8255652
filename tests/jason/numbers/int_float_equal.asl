// 1.0 and 1 are equal, unify, and sort as equal
!start.
+!start <- X = 1.0; Y = 1; if (X == Y) { .print(eq) }; if (X = Y) { .print(unif) }; .print(X, Y);
   .sort([1.0, 1, 0.5], S); .print(S); Z = 3 / 1; .print(Z); if (Z == 3) { .print(three) };
   .stopMAS.
