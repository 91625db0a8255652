// .length as an arithmetic function
!start.
+!start <- N = .length([a,b,c]) + 1; .print(N); .stopMAS.
