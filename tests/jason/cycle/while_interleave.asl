// a while loop interleaves with another intention one step at a time
!a.
!b.
+!a <- +n(0); while (n(N) & N < 3) { .print("a ", N); -+n(N + 1) }.
+!b <- .print(b1); .print(b2); .print(b3); .print(b4); .wait(20); .stopMAS.
