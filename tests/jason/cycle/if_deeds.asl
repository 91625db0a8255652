// an if and its branch are deeds of their own, interleaved with another intention
!a.
!b.
+!a <- if (true) { .print(a1); .print(a2) } else { .print(never) }; .print(a3).
+!b <- .print(b1); .print(b2); .print(b3); .print(b4); .wait(20); .stopMAS.
