// the annotations of a failure event
!start.
+!start <- !g; .stopMAS.
+!g <- .print("in g"); .fail.
-!g[error(E), error_msg(M), code_line(L), code_src(S)] <- .print(E, " | ", M, " | ", L, " | ", S).
