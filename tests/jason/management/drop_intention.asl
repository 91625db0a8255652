// .drop_intention drops the whole intention that has the goal
!a.
!b.
+!a <- .print("a"); !sub; .print("never a").
+!sub <- .wait(1000); .print("never sub").
+!b <- .wait(50); .drop_intention(sub); .print("dropped"); .wait(50);
   if (.intend(sub)) { .print("still intends sub") } else { .print("no sub") };
   if (.intend(a)) { .print("still intends a") } else { .print("no a") };
   .stopMAS.
