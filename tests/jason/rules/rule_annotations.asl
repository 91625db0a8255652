// a query with annotations on a rule head
val(1)[source(self)].
double(X, Y) :- val(X) & Y = X * 2.
!start.
+!start <- ?double(X, Y); .print(X, " ", Y);
   .findall(A, double(_, _)[A], L); .print(L);
   .stopMAS.
