// .wait for a condition
c(0).
!waiter.
!counter.
+!waiter <- .wait(c(3)); .print("c reached 3"); .stopMAS.
+!counter <- .wait(10); -+c(1); .wait(10); -+c(2); .wait(10); -+c(3); .print("set 3").
