// a belief with two sources loses one at a time
!start.
+!start <- +b(1)[source(tom)]; +b(1)[source(ann)]; ?b(1)[source(S)]; .print("source ", S);
   -b(1)[source(tom)]; .findall(Q, b(1)[source(Q)], L); .print(L);
   -b(1)[source(ann)]; .count(b(1), N); .print(N);
   .stopMAS.
