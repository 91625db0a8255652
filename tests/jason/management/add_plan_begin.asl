// .add_plan at the beginning of the plan library takes precedence
!start.
+!g <- .print("old plan").
+!start <- !g; .add_plan({+!g <- .print("new plan")}, self, begin); !g; .stopMAS.
