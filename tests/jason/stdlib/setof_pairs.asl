// .setof over structures
p(b, 2). p(a, 1). p(b, 2). p(c, 0).
!start.
+!start <- .setof(q(X, Y), p(X, Y), S); .print(S); .setof(Y, p(_, Y), T); .print(T); .stopMAS.
