// how standard actions fail: false, wrong arguments, errors
!start.
+!start <- !t(1); !t(2); !t(3); !t(4); !t(5); !t(6); !t(7); !t(8); .stopMAS.
+!t(1) <- .member(a, [b]).
+!t(2) <- .nth(x, [1], _).
+!t(3) <- .union(a, [1], _).
+!t(4) <- .reverse(a, _).
+!t(5) <- .copy_term("s", _).
+!t(6) <- .abolish(3).
+!t(7) <- .random(3).
+!t(8) <- .max([], _).
-!t(N)[error(E), error_msg(M)] <- .print(N, " ", E, " ", M).
