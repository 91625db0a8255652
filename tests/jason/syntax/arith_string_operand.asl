!start.
+!start <- X = "a" * 2.
