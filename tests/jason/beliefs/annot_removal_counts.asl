// beliefs with several annotations: findall, count, removing one annotation at a time
b(1)[a]. b(1)[b].
b(2)[c, source(x)].
!start.
+!start <- .findall(b(X)[A], b(X)[A], L); .print(L); .count(b(_), N); .print(N); .count(b(_)[source(self)], M); .print(M);
   ?b(1)[A1]; .print(A1); -b(1)[a]; .findall(b(X), b(X), L2); .print(L2); -b(1)[b]; .findall(X, b(X), L3); .print(L3);
   .stopMAS.
