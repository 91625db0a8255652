!start.
+!start <- X = not.
