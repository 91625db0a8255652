// a condition's bindings are kept in the then-branch and after
b(7).
!start.
+!start <- if (b(X)) { .print("then ", X) }; .print("after ", X); .stopMAS.
