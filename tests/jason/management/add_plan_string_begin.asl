// .add_plan from a string at the beginning
!start.
+!g <- .print("old").
+!start <- !g; .add_plan("+!g <- .print(new).", self, begin); !g; .remove_plan(p__1); .stopMAS.
