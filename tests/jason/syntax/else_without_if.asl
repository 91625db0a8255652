!start.
+!start <- .print(a); else { .print(b) }; .stopMAS.
