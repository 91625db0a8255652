!start.
+!start <- .print("abc); .stopMAS.
+!g <- .print(x).
