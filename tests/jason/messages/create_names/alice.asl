!start.
+!start <- .create_agent(bob, "quiet.asl"); .create_agent(bob, "quiet.asl");
   .create_agent(Dan, "quiet.asl"); .print(Dan);
   .create_agent(N, "quiet.asl"); .print(N);
   .all_names(L); .sort(L, M); .print(M);
   .stopMAS.
