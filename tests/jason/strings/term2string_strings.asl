// .term2string of a string, and strings inside terms
!start.
+!start <- .term2string("abc", S); .print(S); .length(S, N); .print(N);
   .term2string(f("x"), T); .print(T); .length(T, M); .print(M);
   .stopMAS.
