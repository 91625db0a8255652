// a failure inside a for fails the plan
!start.
+!start <- for (.member(X, [1, 2, 3])) { .print(X); X < 2 }; .print("never").
-!start <- .print("for failed"); .stopMAS.
