// -b with a variable annotation, and abolishing by source
!start.
+!start <- +b(1)[source(x)]; +b(1)[source(y)]; +b(1);
   -b(1)[source(S)]; .print("removed source ", S);
   .findall(Q, b(1)[source(Q)], L); .print(L);
   .stopMAS.
