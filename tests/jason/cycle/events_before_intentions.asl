// a new intention from !! and the caller in turn
!start.
+!start <- !!a; !!b; .print(s1); .print(s2); .print(s3); .wait(20); .stopMAS.
+!a <- .print(a1); .print(a2).
+!b <- .print(b1); .print(b2).
