!start.
+!start <- .print(a); .stopMAS
+!other <- .print(b).
