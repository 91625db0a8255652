// .wait for a formula that already holds takes one deed, like any other
c(1).
!a.
!b.
+!a <- .print(a1); .wait(c(1)); .print(a2); .print(a3).
+!b <- .print(b1); .print(b2); .print(b3); .wait(20); .stopMAS.
