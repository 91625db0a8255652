// nested structures, strings and lists printed
!start.
+!start <- X = f(g(h(1)), [a, "b", c(d)], "str", 'Q', 2.0); .print(X);
   .print(a, b, "c", 1); .print("a", " ", 1.5);
   .stopMAS.
