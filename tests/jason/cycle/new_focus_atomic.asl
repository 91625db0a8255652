// !! inside an atomic plan: the new intention waits for the atomic one
!a.
@at[atomic] +!a <- !!n; .print(a1); .print(a2).
+!n <- .print(n1); .wait(20); .stopMAS.
