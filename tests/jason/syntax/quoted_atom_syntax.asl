// a quoted atom as a functor
'my belief'(1).
!start.
+!start <- ?'my belief'(X); .print(X); .findall(Y, 'my belief'(Y), L); .print(L); .stopMAS.
