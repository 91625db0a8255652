!start.
+!start <- .broadcast(tell, news(1)); .wait(100); .stopMAS.
+news(X)[source(S)] <- .print("alice got news from ", S).
