// a belief change no plan reacts to: its event still takes the intention through the queue
!a.
!b.
+!a <- .print(a1); +x(1); .print(a2); -x(1); .print(a3).
+!b <- .print(b1); .print(b2); .print(b3); .print(b4); .print(b5); .wait(20); .stopMAS.
