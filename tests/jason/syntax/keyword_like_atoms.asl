!start.
+!start <- .print(true, false, begin, end); .print(a.b.c); .stopMAS.
