// string actions that fail, and how
!start.
+!start <- !t(1); !t(2); !t(3); !t(4); !t(5); .stopMAS.
+!t(1) <- .substring(S, "abc", 2, 9).
+!t(2) <- .replace("abc", b, "x", R).
+!t(3) <- .term2string(f(a), g(b)).
+!t(4) <- .substring("x", "abc", P).
+!t(5) <- .upper_case("a", "a").
-!t(N)[error(E)] <- .print(N, " ", E).
