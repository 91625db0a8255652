// .setof
b(3). b(1). b(3). b(2).
!start.
+!start <- .setof(X, b(X), S); .print(S); .setof(Y, b(Y) & Y > 5, E); .print(E); .stopMAS.
