// a failure below a stacked belief reaction that has a -b plan: no failure plan runs
!start.
!stopper.
+!start <- +a; .print("after a").
+a <- !g.
-a <- .print("a removed").
+!g <- .fail.
-!start <- .print("start failure plan").
+!stopper <- .wait(100); .print("stopper"); .stopMAS.
