!start.
+!start <- .print(not(a)); .print((a)); .stopMAS.
