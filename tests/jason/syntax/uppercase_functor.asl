!start.
+!start <- Foo(1); .stopMAS.
