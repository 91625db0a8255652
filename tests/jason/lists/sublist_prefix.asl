// .prefix, .suffix and .sublist
!start.
+!start <- .findall(P, .prefix(P, [a,b,c]), L1); .print(L1);
   .findall(S, .suffix(S, [a,b,c]), L2); .print(L2);
   if (.sublist([b,c], [a,b,c,d])) { .print("sublist") };
   .stopMAS.
