// strongly negated literals printed
!start.
+!start <- +~b(1); ?~b(X); .print(X); .findall(~b(Y), ~b(Y), L); .print(L); .print(~f(a)); .stopMAS.
