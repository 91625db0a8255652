// .concat of strings and of lists
!start.
+!start <- .concat("ab", "cd", "ef", S); .print(S);
   .concat([1,2], [3], [4,5], L); .print(L);
   .concat("x", 1, S2); .print(S2);
   .concat(abc, "def", S3); .print(S3);
   .stopMAS.
