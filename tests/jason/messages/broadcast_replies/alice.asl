!start.
+!start <- .broadcast(achieve, report(7)).
+done(_) : .count(done(_), 2) <- .findall(r(W, N), done(N)[source(W)], L); .sort(L, S); .print(S); .stopMAS.
+!report(_) <- .print("? the sender gets no broadcast").
