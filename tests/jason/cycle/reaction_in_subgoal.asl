// a belief added inside a sub-goal's plan
!start.
+!start <- .print(s1); !g; .print(s2); .stopMAS.
+!g <- .print(g1); +b; .print(g2).
+b <- .print(b1).
