// a failed plan's bindings are undone: the failure plan sees the goal as posted
!start.
+!start <- !g(X); .print("caller X = ", X); .stopMAS.
+!g(Y) <- Y = 1; .fail.
-!g(V) <- .print("recovering with ", V).
