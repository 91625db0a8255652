// a sub-goal whose plan has no body still takes a turn
!a.
!b.
+!a <- .print(a1); !e; .print(a2).
+!e.
+!b <- .print(b1); .print(b2); .print(b3); .print(b4); .wait(20); .stopMAS.
