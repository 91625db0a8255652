// a sub-goal and a belief reaction in one plan
!start.
+!start <- +b; !g; .print(s); .stopMAS.
+b <- .print(b1); .print(b2).
+!g <- .print(g1); .print(g2).
