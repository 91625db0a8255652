!start.
+!start <- X = +3; Y = - 2; .print(X, Y); .print(-(2)); .print(- X); .stopMAS.
