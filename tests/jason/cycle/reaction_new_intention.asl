// a belief reaction that starts a new intention
!start.
+!start <- .print(s1); +a; .print(s2); .print(s3); .print(s4); .wait(20); .stopMAS.
+a <- .print(a1); !!n; .print(a2).
+!n <- .print(n1); .print(n2).
