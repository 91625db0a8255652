// the order of answers: rule clauses in source order, beliefs before rules?
p(1).
p(X) :- X = 2.
p(X) :- X = 3.
p(4).
!start.
+!start <- .findall(X, p(X), L); .print(L); .stopMAS.
