// .copy_term and .rename_apart give fresh variables
!start.
+!start <- T = f(X, g(X, Y)); .copy_term(T, C); C = f(1, g(A, 2)); .print(A);
   if (.ground(T)) { .print("?") } else { .print("the original is not bound") };
   .rename_apart(p(Z, Z), R); R = p(3, W); .print(W);
   .copy_term(q(a)[k], K); .print(K);
   .stopMAS.
