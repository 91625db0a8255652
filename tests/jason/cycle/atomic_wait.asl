// an atomic plan that waits: the other intentions still do not run
!a.
!b.
@at[atomic] +!a <- .print(a1); .wait(50); .print(a2).
+!b <- .print(b1); .print(b2); .wait(100); .stopMAS.
