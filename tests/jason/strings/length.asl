// .length of strings and lists
!start.
+!start <- .length("hello", N); .print(N); .length([a,b,c], M); .print(M);
   .length("", Z); .print(Z); .length([], E); .print(E);
   .stopMAS.
