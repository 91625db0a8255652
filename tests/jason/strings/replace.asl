// .replace
!start.
+!start <- .replace("banana", "an", "AN", R); .print(R);
   .replace("aaa", "a", "", E); .print("[", E, "]");
   .stopMAS.
