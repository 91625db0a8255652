// .intend and .desire
!start.
!loop.
+!start <- .wait(10);
   if (.intend(loop)) { .print("intends loop") };
   if (.desire(loop)) { .print("desires loop") };
   if (.intend(nothing)) { .print("?") } else { .print("does not intend nothing") };
   if (.intend(start)) { .print("intends start") };
   .findall(G, .intend(G), L); .print(L);
   .stopMAS.
+!loop <- .wait(500).
