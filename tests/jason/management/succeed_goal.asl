// .succeed_goal ends a goal as if its plan had finished: the caller goes on
!start.
!stopper.
+!start <- !work; .print("start goes on after work"); .wait(100); .stopMAS.
+!work <- .print("working"); .wait(1000); .print("never").
+!stopper <- .wait(50); .succeed_goal(work); .print("succeeded work").
