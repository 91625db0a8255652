// =.. with a Prolog-style list [functor, args...] fails in Jason 3.2
!start.
+!start <- T =.. [g, 1, 2]; .print(T); .stopMAS.
-!start[error(E)] <- .print("failed: ", E); .stopMAS.
