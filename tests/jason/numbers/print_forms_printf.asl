!start.
+!start <- .print(0.1 + 0.2, " ", 1/3, " ", 1.0e-5, " ", 100000000.0 * 100, " ", -0.0, " ", 3.0);
   .print(["a", b, 1.5, "c\"d"], " ", f("x", 'Y z'));
   .print(1 == 1.0, " ", 2 < 10, " ", "a" < "b", " ", f(1) < f(2), " ", [1] < [2]);
   X = "hello"; .upper_case(X, U); .replace(X, "l", "L", R); .print(U, " ", R);
   .printf("%s has %d items and %.2f%n", bob, 3, 2.5);
   .stopMAS.
-!start[error(E), error_msg(M)] <- .print("err ", E, " ", M); .stopMAS.
