!start.
+!start <- X = [1,2|3]; .print(X).
