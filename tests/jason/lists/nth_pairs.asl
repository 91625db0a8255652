// .nth enumerating positions into structures
!start.
+!start <- .findall(p(I, V), .nth(I, [a,b,c], V), L); .print(L); .stopMAS.
