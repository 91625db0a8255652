// a belief answers a test goal before any +?g plan
price(beer, 2).
!start.
+!start <- ?price(beer, P); .print("beer ", P); ?price(wine, W); .print("wine ", W); .stopMAS.
+?price(I, 9) <- .print("plan for ", I).
