// .my_name in a single agent
!start.
+!start <- .my_name(N); .print(N); if (.my_name(my_name_single)) { .print("yes") }; .stopMAS.
