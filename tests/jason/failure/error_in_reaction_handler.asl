// a failure in a belief reaction stacked on the intention: -!b is not a failure plan for +b
!start.
!stopper.
+!start <- +b; .print("after b").
+b <- .fail.
-!b <- .print("never: -!b is not for +b").
-!start <- .print("start failure plan").
+!stopper <- .wait(200); .print("stopper"); .stopMAS.
