!start.
+!start <- .print(f(a); .stopMAS.
