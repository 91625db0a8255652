fact(1).
+fact(1)[source(alice)] <- .findall(X, fact(1)[source(X)], L); .print(L).
