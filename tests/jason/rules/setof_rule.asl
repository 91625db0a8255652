// .setof sorts and removes duplicates
c(3). c(1). c(2). c(3). c(1).
colors(S) :- .setof(X, c(X), S).
!start.
+!start <- ?colors(S); .print(S); .findall(X, c(X), F); .print(F); .stopMAS.
