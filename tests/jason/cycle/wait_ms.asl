// .wait(ms) lets the others run
!a.
!b.
+!a <- .print(a1); .wait(100); .print(a2); .stopMAS.
+!b <- .print(b1); .wait(20); .print(b2).
