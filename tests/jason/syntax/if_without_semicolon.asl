!start.
+!start <- if (true) { .print(a) } .print(b); .stopMAS.
