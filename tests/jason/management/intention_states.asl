// .intention's states: the running one, a waiting one, a suspended one
!a.
!b.
!c.
+!a <- .wait(500).
+!b <- .print(b1); .print(b2); .print(b3).
+!c <- .wait(10); .suspend(b); .findall(s(I, S), .intention(I, S), L); .print(L); .stopMAS.
