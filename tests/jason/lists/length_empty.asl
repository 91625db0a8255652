// .length and .empty on lists, strings and other terms
!start.
+!start <- .length([a, [b, c]], N); .print(N); .length("", M); .print(M);
   if (.length(abc, _)) { .print("?") } else { .print("an atom has no length") };
   if (.empty(abc)) { .print("?") } else { .print("an atom is not empty") };
   if (.length([1, 2], 2)) { .print("two") };
   .stopMAS.
