// .member in a context that binds by backtracking
p([1, 2, 3]).
!start.
+!start : p(L) & .member(X, L) & X > 1 <- .print("first > 1: ", X); .stopMAS.
