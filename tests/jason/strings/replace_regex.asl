// .replace reads a Java regular expression and $1 group references
!start.
+!start <- .replace("a1b22c333", "[0-9]+", "#", A); .print(A);
   .replace("john smith", "(\\w+) (\\w+)", "$2, $1", B); .print(B);
   .replace("a.b.c", "\\.", "-", C); .print(C);
   .replace(f(x, y), "x", "z", D); .print(D);
   .replace("abc", "", "-", E); .print(E);
   .stopMAS.
