// list patterns with a tail
!start.
+!start <- L = [1, 2, 3, 4]; L = [_, _|R]; .length(R, N); .print(R, " ", N);
   .concat([x], R, C); .print(C);
   .stopMAS.
