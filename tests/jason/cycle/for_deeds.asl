// each step of a for loop is a deed
!a.
!b.
+!a <- for (.member(X, [1, 2, 3])) { .print("a ", X) }; .print(a_end).
+!b <- .print(b1); .print(b2); .print(b3); .print(b4); .print(b5); .print(b6); .wait(20); .stopMAS.
