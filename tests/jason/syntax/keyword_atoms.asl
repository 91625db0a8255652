// true and false as arguments
b(true). b(false).
!start.
+!start <- .findall(X, b(X), L); .print(L); if (b(true)) { .print("b(true)") }; .stopMAS.
