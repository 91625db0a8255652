size(3).
+!greet(X) <- .print("hello ", X).
