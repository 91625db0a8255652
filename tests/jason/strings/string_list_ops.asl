// strings in lists: member, sort, nth
!start.
+!start <- L = ["b", "a", "c"]; if (.member("a", L)) { .print("a is in") };
   .nth(1, L, X); .print(X); .sort(L, S); .print(S); .print(L);
   .stopMAS.
