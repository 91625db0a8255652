// removing every plan for a trigger
!start.
+!g(1) <- .print(one).
+!g(2) <- .print(two).
+!start <- .relevant_plans({+!g(_)}, _, L); .length(L, N); .print(N, " plans"); .remove_plan(L);
   .relevant_plans({+!g(_)}, _, M); .print(M); .stopMAS.
