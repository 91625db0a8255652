// sums of lists
!start.
+!start <- X = math.sum([1, 2, 3.5]); .print(X); Y = math.sum([1, 2]); .print(Y);
   Z = math.average([1, 2, 3, 4]); .print(Z);
   .stopMAS.
