// two intentions that each add beliefs with reactions
!a.
!b.
+!a <- +x(1); .print(a1); +x(2); .print(a2).
+!b <- .print(b1); .print(b2); .print(b3); .wait(20); .stopMAS.
+x(N) <- .print("x ", N).
