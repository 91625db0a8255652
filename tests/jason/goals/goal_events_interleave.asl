// two initial goals interleave one step at a time
!a.
!b.
+!a <- .print(a1); .print(a2); .print(a3).
+!b <- .print(b1); .print(b2); .print(b3); .wait(20); .stopMAS.
