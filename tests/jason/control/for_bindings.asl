// for: the variable is free again after the loop
!start.
+!start <- for (.member(X, [1, 2, 3])) { .print(X) }; .print("after: ", X); X = 9; .print(X); .stopMAS.
