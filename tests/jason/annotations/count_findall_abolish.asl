// .count, .findall with annotations, source, abolish
b(1)[source(self)]. b(2)[x]. b(3)[source(ag), y].
!start.
+!start <- .count(b(_), N); .print(N);
   .findall(V-A, b(V)[A], L); .print(L);
   .findall(V, b(V)[source(self)], L2); .print(L2);
   .abolish(b(_)[x]); .findall(V, b(V), L3); .print(L3);
   .stopMAS.
