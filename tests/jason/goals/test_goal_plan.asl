// a test goal with no belief runs a +?g plan
!start.
+!start <- ?price(beer, P); .print("beer ", P); .stopMAS.
+?price(I, P) <- .print("computing ", I); P = 3.
