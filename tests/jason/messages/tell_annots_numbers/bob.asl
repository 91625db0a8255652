+info(X)[A|R] <- .print(X, " ", A, " ", R).
+num(A, B, C) <- .print(A, " ", B, " ", C).
+s(A, B, C) <- .print(A, " ", B, " ", C).
