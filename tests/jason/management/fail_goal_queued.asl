// .fail_goal on a sub-goal of another intention with a failure plan
!a.
!b.
+!a <- !sub; .print("a after sub").
+!sub <- .print(s1); .wait(100); .print(never).
-!sub <- .print("sub handler").
+!b <- .wait(20); .fail_goal(sub); .print(b1); .wait(50); .stopMAS.
