// .belief: every matching belief in the belief base's order, annotations included
b(1). b(2)[x]. b(3).
c(X) :- b(X).
!start.
+!start <- .findall(X, .belief(b(X)), L); .print(L);
   .findall(Y, .belief(b(Y)[x]), M); .print(M);
   .findall(Z, .belief(c(Z)), N); .print(N);
   .findall(A, .belief(b(_)[A]), O); .print(O);
   .stopMAS.
