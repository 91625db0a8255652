!start.
+!start <- X = -a.
