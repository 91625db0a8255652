// !! starts a new intention; the caller goes on
!start.
+!start <- !!other; .print("start 1"); .print("start 2"); .print("start 3"); .wait(20); .stopMAS.
+!other <- .print("other 1"); .print("other 2").
