// a variable in an initial belief
b(X).
!start.
+!start <- ?b(Y); .print("got ", Y); .stopMAS.
