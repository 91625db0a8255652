// .wait for a belief event
!waiter.
!setter.
+!waiter <- .print("waiting"); .wait({+go(X)}); .print("go ", X); .stopMAS.
+!setter <- .wait(30); .print("setting"); +go(7).
