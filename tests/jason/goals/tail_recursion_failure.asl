// a failure at the end of a tail recursion: the failure plan and then the caller
!start.
+!start <- !loop(0); .print("start goes on"); .stopMAS.
+!loop(N) : N < 3 <- !loop(N + 1).
+!loop(N) <- .fail.
-!loop(N) <- .print("loop failed at ", N).
