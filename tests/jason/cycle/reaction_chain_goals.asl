// reactions and sub-goals stack, and another intention takes its turns in between
!a.
!b.
+!a <- .print(a1); +p; .print(a2).
+p <- .print(p1); !q; .print(p2).
+!q <- .print(q1); +r; .print(q2).
+r <- .print(r1).
+!b <- .print(b1); .print(b2); .print(b3); .print(b4); .print(b5); .print(b6); .print(b7); .print(b8); .wait(20); .stopMAS.
