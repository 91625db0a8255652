// strings printed alone and inside terms
!start.
+!start <- X = "text"; .print(X); .print(f(X)); .print([X, "b"]);
   .print("quote \" inside"); .print(f("quote \" inside"));
   .stopMAS.
