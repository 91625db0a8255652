// two loops with waits of different lengths
!a.
!b.
+!a <- for (.range(I, 1, 3)) { .print("a ", I); .wait(100) }.
+!b <- for (.range(I, 1, 3)) { .print("b ", I); .wait(250) }; .stopMAS.
