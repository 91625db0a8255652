// .fail_goal on a goal of the running intention
!start.
!stopper.
+!start <- !g; .print("after g").
+!g <- .print("in g"); .fail_goal(g); .print("never").
-!g <- .print("g handler").
+!stopper <- .wait(200); .print("stopper"); .stopMAS.
