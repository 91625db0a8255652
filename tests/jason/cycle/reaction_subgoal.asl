// a belief reaction that posts a sub-goal
!start.
+!start <- .print(s1); +a; .print(s2); .stopMAS.
+a <- .print(a1); !g; .print(a2).
+!g <- .print(g1); .print(g2).
