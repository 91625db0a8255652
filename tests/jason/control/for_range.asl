// for over .range
!start.
+!start <- for (.range(I, 1, 4)) { .print(I) }; for (.range(J, 10, 1, -3)) { .print(J) }; .stopMAS.
