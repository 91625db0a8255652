!G.
+!start <- .print(x).
