// adding the same belief with other annotations merges the annotations
!start.
+!start <- +b(1)[a]; +b(1)[c]; +b(1)[b]; .findall(A, b(1)[A], L); .print(L);
   ?b(1)[A|R]; .print("first ", A, " rest ", R);
   .count(b(_), N); .print(N);
   .stopMAS.
