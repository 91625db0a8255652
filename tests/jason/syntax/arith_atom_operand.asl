!start.
+!start <- X = a + 1; .print(X).
