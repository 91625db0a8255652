// all annotations of a failure event, printed
!start.
+!start <- !g(1); .stopMAS.
+!g(X) <- .fail(error(oops)).
-!g(X)[|A] <- .print(A).
