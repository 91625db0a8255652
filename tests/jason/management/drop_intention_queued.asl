// .drop_intention of a running (queued) intention
!a.
!b.
+!a <- .print(a1); .print(a2); .print(a3); .print(a4).
+!b <- .print(b1); .drop_intention(a); .print(b2); .print(b3); .wait(20); .stopMAS.
