// a findall template that is an unbound variable not in the query
!start.
+!start <- +b(1)[a]; +b(1)[c]; +b(1)[b]; .findall(B, b(1), L); .print(L);
   ?b(1)[A|R]; .print("first ", A, " rest ", R);
   .stopMAS.
