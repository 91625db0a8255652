// a recursive goal (a loop by recursion)
!count(0).
+!count(5) <- .print("done"); .stopMAS.
+!count(N) <- .print(N); !count(N + 1).
