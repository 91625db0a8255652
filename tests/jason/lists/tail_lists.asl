!start.
+!start <- X = [a|[b,c]]; .print(X); Y = [1|[]]; .print(Y); .stopMAS.
