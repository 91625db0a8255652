// an intention without a failure plan is dropped; the others go on
!start.
!other.
+!start <- .print("start"); .fail; .print("never").
+!other <- .print("other 1"); .wait(20); .print("other 2"); .stopMAS.
