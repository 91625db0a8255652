// .suspend a queued intention, then .resume it
!a.
!b.
+!a <- .print(a1); .print(a2); .print(a3).
+!b <- .print(b1); .suspend(a); .print(b2); .print(b3); .resume(a); .print(b4); .print(b5); .wait(20); .stopMAS.
