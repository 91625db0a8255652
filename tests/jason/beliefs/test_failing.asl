// a test goal for an absent belief fails the plan
!start.
+!start <- ?nothere(X); .print("never").
-!start <- .print("test goal failed"); .stopMAS.
