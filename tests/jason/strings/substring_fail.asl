// .substring that is not there fails
!start.
+!start <- if (.substring("z", "hello")) { .print("?") } else { .print("no z") };
   .substring("z", "hello", P); .print("never ", P).
-!start <- .print("substring with position failed"); .stopMAS.
