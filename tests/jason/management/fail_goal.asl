// .fail_goal fails a goal: its failure plan runs
!start.
!stopper.
+!start <- !work; .print("never after work").
+!work <- .print("working"); .wait(1000); .print("never").
-!work[error(E)] <- .print("work failed: ", E).
-!start <- .print("start failed").
+!stopper <- .wait(50); .fail_goal(work); .print("failed work"); .wait(50); .stopMAS.
