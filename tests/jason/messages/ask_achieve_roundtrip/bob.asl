price(10). item(a). item(b).
+!work(N)[source(S)] <- .print("working ", N, " for ", S); .send(S, tell, result(N*2)).
+done[source(A)] <- .print("done from ", A).
