// .intend and .desire bind the goal's arguments
!w(7).
!start.
+!w(N) <- .wait(500).
+!start <- .wait(10); .intend(w(X)); .print("intends w(", X, ")");
   .findall(D, .desire(D), L); .print(L); .stopMAS.
