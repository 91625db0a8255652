!start.
+!start <- .send(bob, askHow, {+!hello(_)}, P); .print(P); .stopMAS.
