// .concat with an unbound first argument splits a string
!start.
+!start <- .concat(X, "world", "hello world"); .print("[", X, "]"); .stopMAS.
-!start[error(E)] <- .print("failed ", E); .stopMAS.
