// code_line and code of a sub-goal no plan is relevant to
!start.
+!start <- !g(1); .stopMAS.
+!g(X) <- .print("in g");
   !missing(X).
-!g(X)[error(E), code_line(L)] <- .print(E, " at ", L).
