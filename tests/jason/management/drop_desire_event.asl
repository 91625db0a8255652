// .drop_desire drops a goal's event before it is selected
!start.
+!start <- !!g; .drop_desire(g); .wait(20); .print("done"); .stopMAS.
+!g <- .print("g ran").
