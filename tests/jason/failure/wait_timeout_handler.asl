// a .wait that times out fails with wait_timeout; the other intention goes on meanwhile
!a.
!b.
+!a <- .wait({+never}, 30); .print("never").
-!a[error(E)] <- .print("a failed: ", E).
+!b <- .print(b1); .wait(60); .print(b2); .stopMAS.
