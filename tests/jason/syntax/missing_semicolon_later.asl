// a missing ; further down
b(1).
!start.
+!start <- .print(a);
   .print(b);
   ?b(X)
   .print(X);
   .stopMAS.
