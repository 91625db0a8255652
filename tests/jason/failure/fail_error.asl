// .fail with a custom error and extra annotations
!start.
+!start <- !g; .stopMAS.
+!g <- .fail(error(my_error), reason(42)).
-!g[error(E), reason(R)] <- .print("error ", E, " reason ", R).
