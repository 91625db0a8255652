// initial beliefs and their events, with initial goals
b(1).
b(2).
!g.
b(3).
+b(X) <- .print("b ", X).
+!g <- .print("g"); .wait(20); .stopMAS.
