// contexts with true, and with a plan on one line
!start.
+!start : true <- .print(a); .stopMAS.
