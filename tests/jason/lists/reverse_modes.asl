// .reverse: lists, strings, nested
!start.
+!start <- .reverse([a, [b, c], "d"], L); .print(L);
   .reverse("", E); .print("[", E, "]");
   if (.reverse([1, 2], [2, 1])) { .print("checked") };
   .stopMAS.
