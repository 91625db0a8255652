// .eval evaluates a logical expression
b(1).
!start.
+!start <- .eval(X, b(1) & 2 > 1); .print(X); .eval(Y, b(2)); .print(Y); .stopMAS.
