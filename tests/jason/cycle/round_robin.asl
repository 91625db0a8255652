// three intentions: one deed each per cycle, in turn
!a.
!b.
!c.
+!a <- .print(a1); .print(a2); .print(a3).
+!b <- .print(b1); .print(b2); .print(b3).
+!c <- .print(c1); .print(c2); .print(c3); .wait(20); .stopMAS.
