!start.
+!start <- ~.print(a).
