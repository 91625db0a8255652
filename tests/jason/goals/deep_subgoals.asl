// nested sub-goals return in order
!start.
+!start <- .print("s in"); !a; .print("s out"); .stopMAS.
+!a <- .print("a in"); !b; .print("a out").
+!b <- .print("b in"); !c; .print("b out").
+!c <- .print("c").
