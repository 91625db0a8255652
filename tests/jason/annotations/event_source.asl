// the source of a belief event
!start.
+!start <- +b(1)[source(tom)]; +c(2); .wait(20); .stopMAS.
+b(X)[source(S)] <- .print("b ", X, " from ", S).
+c(X)[source(S)] <- .print("c ", X, " from ", S).
