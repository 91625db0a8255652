// a binding made by the failed plan's context stays in the failure event; the caller's variable stays free
b(3).
!start.
+!start <- !g(X); if (.ground(X)) { .print("caller X bound") } else { .print("caller X free") }; .stopMAS.
+!g(Y) : b(Y) <- .print("in g ", Y); .fail.
-!g(V) <- .print("handler sees ", V).
