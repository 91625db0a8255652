// included by include.asl
helper_fact(7).
+!help(X) <- .print("helped ", X).
