!start.
+!start <- .print(x)
