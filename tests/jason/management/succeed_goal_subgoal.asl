// .succeed_goal on a sub-goal the intention itself is in
!start.
+!start <- !outer; .print("after outer"); .stopMAS.
+!outer <- !inner; .print("never: outer after inner").
+!inner <- .succeed_goal(outer); .print("never: inner").
