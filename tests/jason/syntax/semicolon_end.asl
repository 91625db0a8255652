// a ; before the final period
!start.
+!start <- .print(a); .stopMAS;.
