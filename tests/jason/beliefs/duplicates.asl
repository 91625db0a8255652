// adding a belief that is already there: no second copy, and is an event raised?
count(0).
!start.
+!start <- +b(1); +b(1); +b(1); .count(b(_), N); .print("copies: ", N); .stopMAS.
+b(X) <- ?count(C); -+count(C+1); ?count(D); .print("event +b(", X, ") #", D).
