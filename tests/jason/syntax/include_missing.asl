// including a file that does not exist
{ include("no_such_file.asl") }
!start.
+!start <- .print(a); .stopMAS.
