// ++ and -- (new-focus belief changes)
!start.
+!start <- .print(s1); ++a; .print(s2); --a; .print(s3); .wait(20); .stopMAS.
+a <- .print(a1); .print(a2).
-a <- .print(r1); .print(r2).
