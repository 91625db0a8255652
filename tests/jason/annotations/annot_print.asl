// printing annotated terms
!start.
+!start <- X = b(1)[source(self), a]; .print(X);
   Y = f[x]; .print(Y);
   +c(2)[q]; ?c(2)[|Z]; .print(Z);
   .findall(c(N)[Q], c(N)[Q], L); .print(L);
   .stopMAS.
