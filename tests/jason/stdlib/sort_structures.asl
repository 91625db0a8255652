// .sort orders structures by functor, arity, then arguments
!start.
+!start <- .sort([b(1), a(2, 1), a(3), a(1, 1), b(0), a], L); .print(L); .stopMAS.
