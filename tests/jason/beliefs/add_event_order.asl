// plans for +b run after the plan that added the belief yields
!start.
+!start <- +b(1); +b(2); .print("start done"); .wait(20); .stopMAS.
+b(X) <- .print("saw ", X).
