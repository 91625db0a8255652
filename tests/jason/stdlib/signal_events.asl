// .signal posts an event without changing the belief base
!start.
+!start <- .signal({+b(1)}); .signal({+!g(2)[source(ann)]}); .wait(20);
   if (b(_)) { .print("?") } else { .print("no belief b") };
   .stopMAS.
+b(X)[source(S)] <- .print("b ", X, " from ", S).
+!g(X)[source(S)] <- .print("g ", X, " from ", S).
