// failure chain, nested goals, annotations on goals
!start.
+!start <- !a(1); .print("after a").
+!a(X) <- !b(X+1); .print("a done ", X).
+!b(Y) : Y > 5 <- .print("big").
-!b(Y)[error(E), code_line(L)] <- .print("b failed ", Y, " ", E, " line ", L).
-!a(X)[error(E)] <- .print("a failed ", E).
+!stop <- .stopMAS.
