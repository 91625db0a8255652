// the order initial goals start in
!a.
!b.
!c.
+!a <- .print("a1"); .print("a2").
+!b <- .print("b1"); .print("b2").
+!c <- .print("c1"); .print("c2"); .wait(20); .stopMAS.
