+done <- .findall(X, a(X), L); .print(L); .stopMAS.
