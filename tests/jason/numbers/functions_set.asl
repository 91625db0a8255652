// .length as a function, math.max of an empty list (Double.MIN_VALUE), mean, median, std_dev
!start.
+!start <- L = [1,2]; Y = .length(L) * 10; .print(Y); .print(.length("abcd") + .length([])); 
   X = math.max([]); .print(X); W = math.abs(-3) + math.sqrt(16); .print(W);
   .print(math.mean([1,2,3,4]), " ", math.median([5,1,3,2]), " ", math.std_dev([2,4,4,4,5,5,7,9]));
   .stopMAS.
