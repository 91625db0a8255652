// belief updates, events and interleaving of two goals
count(0).
!inc(3).
!watch.
+!inc(0).
+!inc(N) : count(C) <- -+count(C+1); .print("inc ", C+1); !inc(N-1).
+count(C) : C >= 3 <- .print("reached ", C).
+!watch <- .wait({+count(2)}); .print("saw 2"); .wait(10); .stopMAS.
