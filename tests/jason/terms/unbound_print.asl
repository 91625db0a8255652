// printing unbound variables
!start.
+!start <- .print(X); .print(f(X, Y)); .print([A|B]); .print(_); .stopMAS.
