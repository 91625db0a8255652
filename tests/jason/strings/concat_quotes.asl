// .concat of strings and numbers; strings with quotes printed alone and inside terms
!start.
+!start <- .concat("a", "b", S); .print(S); .concat("x", 1, 2.5, S2); .print(S2); .length("hello", N); .print(N);
   if ("abc" == "abc") { .print(eq) }; X = "say \"hi\""; .print(X); .print([X]); .print(f(X));
   .print("unicode: é ✓"); .print('single', " ", "double");
   .stopMAS.
