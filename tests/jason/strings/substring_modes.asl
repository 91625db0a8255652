// .substring: every position with its end, parts of a term's text, a test at a position
!start.
+!start <- .findall(p(B, E), .substring("an", "banana", B, E), L); .print(L);
   .substring(S, f(10, 20), 5); .print(S);
   .substring(T, "abcdef", 1, 3); .print(T);
   .findall(P, .substring(a, f(a, ba), P), M); .print(M);
   if (.substring("ban", "banana", 0)) { .print("at 0") };
   if (.substring("ana", "banana", 2)) { .print("?") } else { .print("not at 2") };
   .findall(Q, .substring("", "ab", Q), N); .print(N);
   .stopMAS.
