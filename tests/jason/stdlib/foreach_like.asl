// .findall with .range and arithmetic
!start.
+!start <- .findall(X * X, .range(X, 1, 5), L); .print(L); .findall(Y, .range(Y, 5, 1, -2), M); .print(M); .stopMAS.
