// the failure plan binds the goal the caller posted: the caller sees the binding
!start.
+!start <- !g(X); .print("X = ", X); .stopMAS.
+!g(Y) <- .fail.
-!g(Z) <- Z = 7; .print("handler set Z = ", Z).
