// +b and -b change the belief base; queries see the change at once
!start.
+!start <- +b(1); +b(2); .findall(X, b(X), L1); .print(L1);
   -b(1); .findall(X, b(X), L2); .print(L2);
   -b(7); .print("removing an absent belief succeeds");
   .stopMAS.
