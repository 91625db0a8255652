// a loop written as tail recursion runs deeper than any stack (Jason's tail recursion optimisation)
!start.
+!start <- !loop(0); .print("after loop"); .stopMAS.
+!loop(N) : N < 20000 <- !loop(N + 1).
+!loop(N) <- .print("done ", N).
