b(if).
!start.
+!start <- .stopMAS.
