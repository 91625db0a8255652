!start.
+!start <- X = a \= b.
