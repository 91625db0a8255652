// .nth with a bad index fails
!start.
+!start <- .nth(-1, [a, b], X); .print("never ", X).
-!start[error(E)] <- .print("failed ", E); .stopMAS.
