// .max of an empty list fails
!start.
+!start <- .max([], M); .print("never ", M).
-!start <- .print("max of [] failed"); .stopMAS.
