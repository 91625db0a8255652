// .desire sees a goal whose event is still pending
!start.
+!start <- !!g; if (.desire(g)) { .print("desires g") } else { .print("no g yet") }; .wait(20); .stopMAS.
+!g <- .print("g").
