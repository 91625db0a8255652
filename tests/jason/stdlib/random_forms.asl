// .random: how many solutions each form gives
!start.
+!start <- .findall(X, .random(X, 4), L); .length(L, N); .print(N);
   .findall(Y, .random([a, b], Y, 3), M); .length(M, K); .print(K);
   .findall(Z, .random([a], Z), P); .print(P);
   if (.random([], _)) { .print("?") } else { .print("nothing from []") };
   .random(R); if (R < 1) { .print("below 1") };
   .stopMAS.
