// the order in which queries answer initial beliefs and added ones
b(1).
b(2).
b(3).
!start.
+!start <- .findall(X, b(X), L); .print(L);
   +b(0); +b(4); .findall(Y, b(Y), M); .print(M);
   ?b(Z); .print("first: ", Z);
   .stopMAS.
