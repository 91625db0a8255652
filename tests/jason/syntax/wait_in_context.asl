!start.
+!start : .wait(10) <- .print(x).
