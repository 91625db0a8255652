// annotations that are structures with annotations of their own
!start.
+!start <- +b(1)[p(q)[r], source(self)]; .findall(A, b(1)[A], L); .print(L);
   ?b(1)[p(Q)]; .print(Q);
   .stopMAS.
