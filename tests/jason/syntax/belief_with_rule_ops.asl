// an achievement goal with a string argument and nested lists in the body
!g("x", [1, [2, 3]], f(y)).
+!g(S, L, T) <- .print(S, L, T); .stopMAS.
