// intentions with sub-goals interleave
!a.
!b.
+!a <- .print(a1); !sa; .print(a2).
+!sa <- .print(sa1); .print(sa2).
+!b <- .print(b1); .print(b2); .print(b3); .print(b4); .wait(20); .stopMAS.
