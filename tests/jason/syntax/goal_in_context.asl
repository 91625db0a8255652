// an internal action in a plan context
!start.
+!start : .my_name(N) & .length([1,2], 2) <- .print("I am ", N); .stopMAS.
