// .desire over goal events and intentions, with arguments
!start.
+!start <- !!g(1); !!g(2); .findall(X, .desire(g(X)), L); .print(L); .wait(20);
   .findall(Y, .desire(g(Y)), L2); .print(L2); .stopMAS.
+!g(N) <- .wait(100).
