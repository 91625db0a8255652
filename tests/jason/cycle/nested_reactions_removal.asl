// removal events stack the same way
x. y.
!start.
+!start <- .print(s1); -x; .print(s2); .stopMAS.
-x <- .print(x1); -y; .print(x2).
-y <- .print(y1).
