!start.
+!start <- .print(a); .stopMAS.
/* never closed
+!other <- .print(b).
