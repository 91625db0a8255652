// a recursive goal that is not the last deed keeps its caller
!start.
+!start <- !r(2); .print("end"); .stopMAS.
+!r(0) <- .print("bottom").
+!r(N) : N > 0 <- !r(N - 1); .print("up ", N).
