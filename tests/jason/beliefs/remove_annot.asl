// removing a belief with some annotations: -b(1)[a] in a plan also means source(self)
!start.
+!start <- +b(1)[a,b]; -b(1)[a]; .findall(X-Y, b(X)[Y], L); .print(L);
   +c(1)[a,b,source(tom)]; -c(1)[a]; .findall(A, c(1)[A], M); .print(M);
   -c(1)[b,source(tom)]; .count(c(_), N); .print("left ", N);
   .stopMAS.
