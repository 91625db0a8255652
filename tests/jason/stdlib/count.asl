// .count
b(1). b(2). b(3). c.
!start.
+!start <- .count(b(_), N); .print(N); .count(b(X) & X > 1, M); .print(M); .count(d, Z); .print(Z);
   .count(c, C); .print(C);
   .stopMAS.
