!start.
+!start <- .print(a);; .print(b).
