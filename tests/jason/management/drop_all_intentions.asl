// .drop_all_intentions drops every other intention (and goal events)
!a.
!b.
!c.
+!a <- .wait(1000); .print("never a").
+!b <- .wait(1000); .print("never b").
+!c <- .wait(50); .print("c drops all"); !!later; .drop_all_intentions; .print("c goes on"); .wait(50);
   if (.intend(a)) { .print("still intends a") } else { .print("a dropped") };
   if (.desire(later)) { .print("still desires later") } else { .print("later dropped") };
   .stopMAS.
+!later <- .print("later ran").
