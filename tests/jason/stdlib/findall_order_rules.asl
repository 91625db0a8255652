// .findall over beliefs added later and rules
b(1).
r(X) :- b(X) & X > 0.
!start.
+!start <- +b(2); +b(3); .findall(X, r(X), L); .print(L); .stopMAS.
