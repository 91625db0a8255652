// an empty body written with <-
!start.
+!start <- !g; .print(done); .stopMAS.
+!g <- .
