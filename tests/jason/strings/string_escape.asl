// escapes in strings
!start.
+!start <- .print("tab[\t] nl-less"); .length("a\"b", N); .print(N);
   .term2string(S, "\"q\""); .print(S);
   .stopMAS.
