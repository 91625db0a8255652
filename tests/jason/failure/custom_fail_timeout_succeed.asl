!start.
+!start <- .fail(error(custom), reason(bad)).
-!start[error(E), reason(R), error_msg(M)] <- .print(E, " ", R, " [", M, "]"); !t.
+!t <- .wait({+never}, 30).
-!t[error(E)] <- .print("t ", E); !s.
+!s <- .succeed_goal(s); .print(unreachable).
