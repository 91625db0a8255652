// -b(X) with X unbound removes the first matching belief and binds X
b(1). b(2). b(3).
!start.
+!start <- -b(X); .print("removed ", X); .findall(Y, b(Y), L); .print(L); .stopMAS.
