// .add_plan with a source, and .relevant_plans showing it
!start.
+!start <- .add_plan({@np +!n <- .print(n)}, tom); .relevant_plans({+!n}, _, L); .print(L); !n; .stopMAS.
