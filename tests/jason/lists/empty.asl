// .empty
!start.
+!start <- if (.empty([])) { .print("[] empty") }; if (.empty("")) { .print("\"\" empty") };
   if (.empty([a])) { .print("?") } else { .print("[a] not empty") };
   .stopMAS.
