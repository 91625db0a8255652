// .drop_event removes a pending goal event
!start.
+!start <- !!g; .drop_event(g); .print("dropped the event"); .wait(30);
   if (.desire(g)) { .print("still desires g") } else { .print("g is gone") };
   .stopMAS.
+!g <- .print("g ran").
