// +<b adds at the beginning, +>b at the end
!start.
+!start <- +b(1); +>b(2); +<b(0); +>b(3); .findall(X, b(X), L); .print(L); .stopMAS.
