!g1. !g2.
+!g1 <- .print(a1); .print(a2); .print(a3).
@p[atomic] +!g2 <- .print(b1); .print(b2); .print(b3).
+!never <- true.
