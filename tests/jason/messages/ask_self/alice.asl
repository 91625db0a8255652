// an agent telling itself
!start.
+!start <- .send(alice, tell, note(1)); .wait(100); ?note(X)[source(S)]; .print(X, " from ", S); .stopMAS.
