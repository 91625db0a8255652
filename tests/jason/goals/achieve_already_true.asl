// an achievement goal's plan runs even when the belief holds
done.
!start.
+!start <- !done; .print("after"); .stopMAS.
+!done <- .print("plan for done ran").
