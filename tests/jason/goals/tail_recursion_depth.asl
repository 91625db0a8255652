// the intention's stack during tail recursion keeps one plan for the loop
!start.
+!start <- !down(3); .print("back"); .stopMAS.
+!down(0) <- .current_intention(intention(_, S)); .length(S, L); .print("depth ", L).
+!down(N) : N > 0 <- .print("down ", N); !down(N - 1).
