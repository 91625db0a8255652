// .drop_desire with arguments that do not match drops nothing
!start.
!w(1).
!w(2).
+!start <- .wait(10); .drop_desire(w(1)); .wait(100); .stopMAS.
+!w(N) <- .wait(50); .print("w ", N, " done").
