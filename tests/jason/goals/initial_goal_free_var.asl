// an initial goal with a free variable runs its plan with the variable unbound
!g(X).
+!g(A) <- .print(A); .stopMAS.
