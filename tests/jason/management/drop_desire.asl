// .drop_desire removes the goal's intention without failure plans
!start.
!stopper.
+!start <- !work; .print("never").
+!work <- .print("working"); .wait(1000); .print("never").
-!work <- .print("no failure plan should run").
+!stopper <- .wait(50); .drop_desire(work); .print("dropped"); .wait(50); .stopMAS.
