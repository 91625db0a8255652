// .wait for an event with a timeout
!start.
+!start <- .wait({+never}, 50); .print("never printed").
-!start[error(E)] <- .print("timed out: ", E); !t2.
+!t2 <- .wait({+never}, 30, Elapsed); if (.number(Elapsed)) { .print("elapsed is a number") }; .stopMAS.
