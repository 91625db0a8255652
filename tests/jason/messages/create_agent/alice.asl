!start.
+!start <- .create_agent(carol, "helper.asl"); .send(carol, achieve, hello(alice)).
+hi(N)[source(S)] <- .print("hi ", N, " from ", S); .all_names(L); .sort(L, M); .print(M); .stopMAS.
