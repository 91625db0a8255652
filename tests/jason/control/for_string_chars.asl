// for with a conjunction and a findall inside
p(1). p(2). p(3). p(4).
!start.
+!start <- for (p(X) & X mod 2 == 0) { .findall(Y, p(Y) & Y < X, L); .print(X, " ", L) }; .stopMAS.
