// an intention woken by an event goes on before the event's own reaction
!w.
!s.
+!w <- .wait({+go}); .print("woken").
+!s <- .wait(10); +go; .print("after go"); .wait(20); .stopMAS.
+go <- .print("reaction 1"); .print("reaction 2").
