// a while loop whose body is one goal: the test and the goal are deeds of their own
n(0).
!a.
!b.
+!a <- while (n(N) & N < 2) { !step }.
+!step : n(N) <- -+n(N + 1); .print("step ", N).
+!b <- .print(b1); .print(b2); .print(b3); .print(b4); .print(b5); .print(b6); .wait(20); .stopMAS.
