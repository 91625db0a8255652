!start.
+!start <- .send([bob, carl], tell, hi); .wait(100); .stopMAS.
