// !! and belief reactions of two intentions
!start.
+!start <- !!x; +b; .print(s1); .print(s2); .wait(20); .stopMAS.
+!x <- .print(x1); .print(x2).
+b <- .print(b1); .print(b2).
