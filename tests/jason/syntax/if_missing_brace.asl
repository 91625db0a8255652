!start.
+!start <- if (true) { .print(a) ; .stopMAS.
+!g <- .print(b).
