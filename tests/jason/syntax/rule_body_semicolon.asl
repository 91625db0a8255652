// a rule body with ; is refused
r(X) :- X > 1; X < 5.
!start.
+!start <- .print(a); .stopMAS.
