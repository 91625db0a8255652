// -+ replaces the belief of that functor and arity
counter(0).
!start.
+!start <- -+counter(1); ?counter(A); .print(A);
   -+counter(A+1); ?counter(B); .print(B);
   .findall(X, counter(X), L); .print(L);
   -+fresh(1); ?fresh(F); .print("fresh ", F);
   .stopMAS.
