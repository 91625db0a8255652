// a test goal answered by a plan is an event too
!a.
!b.
+!a <- .print(a1); ?q(X); .print("a got ", X).
+?q(7) <- .print(q1).
+!b <- .print(b1); .print(b2); .print(b3); .print(b4); .wait(20); .stopMAS.
