// beliefs added by a plan carry source(self); initial ones too
b(1).
!start.
+!start <- +c(2); ?b(X)[source(S)]; .print(X, " from ", S);
   ?c(Y)[source(T)]; .print(Y, " from ", T);
   .findall(B, b(_)[B], L); .print(L);
   .stopMAS.
