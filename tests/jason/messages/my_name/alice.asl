!start.
+!start <- .my_name(N); .print("I am ", N); .send(bob, tell, hello(N)).
