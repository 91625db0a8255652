// .count over a rule and a conjunction
b(1). b(2). b(3).
odd(X) :- b(X) & X mod 2 == 1.
!start.
+!start <- .count(odd(_), N); .print(N); .count(b(X) & odd(X), M); .print(M); .stopMAS.
