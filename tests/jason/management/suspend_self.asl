// an intention suspends itself; another resumes it
!a.
!b.
+!a <- .print("a before"); .suspend; .print("a after").
+!b <- .wait(30); .print("b resumes a"); .resume(a); .wait(30); .stopMAS.
