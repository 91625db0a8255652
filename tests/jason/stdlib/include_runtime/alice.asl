// .include at run time: the plans and beliefs of lib.asl join alice; a missing file is logged
!start.
+!start <- .include("lib.asl"); !greet(bob); ?size(N); .print(N); !miss.
+!miss <- .include("nothere.asl"); .print("after a missing include"); .stopMAS.
