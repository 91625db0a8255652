// .relevant_plans: the plans and their labels
!start.
@p1 +!g(X) : X > 1 <- .print(big).
@p2 +!g(X) <- .print(small).
+!start <- .relevant_plans({+!g(_)}, _, L); .print(L);
   .relevant_plans({+!nothing}, P2); .print(P2);
   .stopMAS.
