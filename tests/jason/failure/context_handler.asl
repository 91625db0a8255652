// failure plans with contexts: the first applicable one runs
mode(safe).
!start.
+!start <- !g; .print("end"); .stopMAS.
+!g <- .fail.
-!g : mode(fast) <- .print("fast recovery").
-!g : mode(safe) <- .print("safe recovery").
