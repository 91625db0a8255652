// .print and .println with several arguments
!start.
+!start <- .print("a", b, 1, 2.5, [c], f(d)); .println("x", y); .print(); .print(""); .stopMAS.
