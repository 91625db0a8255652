// .asserta and .assertz
!start.
+!start <- .assertz(b(2)); .asserta(b(1)); .assertz(b(3)); .findall(X, b(X), L); .print(L); .stopMAS.
