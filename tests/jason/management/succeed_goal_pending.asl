// .succeed_goal on a goal that is waiting in a sub-goal
!start.
+!start <- !!a; .wait(20); .succeed_goal(b); .wait(20); .stopMAS.
+!a <- !b; .print("a goes on after b").
+!b <- .wait(500); .print("never").
