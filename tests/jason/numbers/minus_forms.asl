!start.
+!start <- X = 3; .print(X-1, " ", X - -1, " ", 2*-X, " ", -X**2); .stopMAS.
