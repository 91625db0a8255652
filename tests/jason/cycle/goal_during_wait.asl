// events are handled while an intention waits
!start.
+!start <- !!other; .wait(50); .print("start after wait"); .stopMAS.
+!other <- .print("other runs"); +b.
+b <- .print("b reaction").
