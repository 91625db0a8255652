// an atomic plan for a belief event
!a.
!b.
+!a <- .print(a1); +x; .print(a2); .print(a3).
@r[atomic] +x <- .print(x1); .print(x2).
+!b <- .print(b1); .print(b2); .print(b3); .wait(20); .stopMAS.
