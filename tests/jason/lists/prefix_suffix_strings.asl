// .prefix, .suffix and .sublist: strings, every solution, tests
!start.
+!start <- .findall(P, .prefix(P, "abc"), L1); .print(L1);
   .findall(S, .suffix(S, "abc"), L2); .print(L2);
   .findall(B, .sublist(B, [1, 2, 3]), L3); .print(L3);
   if (.prefix("ab", "abc")) { .print("ab prefix") };
   if (.suffix([c], [a, b, c])) { .print("[c] suffix") };
   if (.sublist([a, c], [a, b, c])) { .print("?") } else { .print("[a,c] is no sublist") };
   .findall(X, .prefix([X|_], [1, 2]), L4); .print(L4);
   .stopMAS.
