// .concat with an unbound list splits
!start.
+!start <- .concat(X, [3], [1, 2, 3]); .print(X); .stopMAS.
-!start[error(E)] <- .print("failed ", E); .stopMAS.
