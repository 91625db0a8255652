// three intentions: a sub-goal, a belief reaction and plain deeds interleave
!a.
!b.
!c.
+!a <- .print(a1); !sa; .print(a2).
+!sa <- .print(sa1).
+!b <- .print(b1); +x; .print(b2).
+x <- .print(x1).
+!c <- .print(c1); .print(c2); .print(c3); .print(c4); .print(c5); .wait(20); .stopMAS.
