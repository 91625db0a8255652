// .succeed_goal on a goal of a queued intention: its caller goes on
!a.
!b.
+!a <- !sub; .print("a after sub").
+!sub <- .print(s1); .print(s2); .print(s3); .print(s4).
+!b <- .print(b1); .succeed_goal(sub); .print(b2); .print(b3); .wait(20); .stopMAS.
