// plan terms as values
!start.
+!start <- P = {+!g(X) : X > 1 <- .print(X); .print(done)}; .print(P); .stopMAS.
