// .shuffle keeps the elements (their order varies: only sorted output is printed)
!start.
+!start <- .shuffle([3, 1, 2], S); .sort(S, T); .print(T); .length(S, N); .print(N); .stopMAS.
