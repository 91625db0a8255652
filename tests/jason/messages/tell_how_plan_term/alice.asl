!start.
+!start <- .send(bob, tellHow, {+!hi <- .print("hi from a told plan")}); .wait(200); .send(bob, achieve, hi); .wait(200); .stopMAS.
