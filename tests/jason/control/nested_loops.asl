// nested for loops
!start.
+!start <- for (.member(X, [1, 2])) { for (.member(Y, [a, b])) { .print(X, Y) } }; .stopMAS.
