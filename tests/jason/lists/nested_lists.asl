// lists of lists and their printing
!start.
+!start <- L = [[1,2],[],[a,[b]]]; .print(L); .length(L, N); .print(N);
   .nth(2, L, X); .nth(1, X, Y); .print(Y);
   .concat(L, [[z]], M); .print(M);
   .stopMAS.
