// annotation variables and tails in triggers bind in Jason's order
!start.
+!start <- !g(1)[x, y]; !h[source(self), w];
   .stopMAS.
+!g(N)[A] <- .print(N, A).
+!h[source(S)|T] <- .print(S, T).
