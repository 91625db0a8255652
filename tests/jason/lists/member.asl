// .member tests and enumerates
!start.
+!start <- if (.member(b, [a,b,c])) { .print("b is in") };
   .findall(X, .member(X, [3,1,2]), L); .print(L);
   .findall(Y, .member(f(Y), [f(1), g(2), f(3)]), M); .print(M);
   .stopMAS.
