// .abolish removes every matching belief
b(1). b(2). c(1).
!start.
+!start <- .abolish(b(_)); .findall(X, b(X), L); .print(L); .count(c(_), N); .print(N);
   +d(1)[source(tom)]; +d(2); .abolish(d(_)[source(tom)]); .findall(Y, d(Y), M); .print(M);
   .stopMAS.
