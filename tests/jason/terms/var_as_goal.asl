// a variable bound to a literal used as a goal and a belief
!start.
+!start <- G = hello(1); !G; B = fact(2); +B; ?fact(F); .print(F); .stopMAS.
+!hello(N) <- .print("hello ", N).
