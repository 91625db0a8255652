// after a failure plan the caller goes on
!start.
+!start <- !risky(1); .print("after risky"); !risky(2); .print("end"); .stopMAS.
+!risky(N) <- .print("risky ", N); .fail.
-!risky(N) <- .print("recovered ", N).
