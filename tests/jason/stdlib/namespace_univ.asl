// the namespace of a literal
!start.
+!start <- +ns::b(1); ?ns::b(X); .print(X); .findall(Y, ns::b(Y), L); .print(L);
   .stopMAS.
