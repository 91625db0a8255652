// .concat with numbers and terms
!start.
+!start <- .concat("v", 1.5, "/", 2, S); .print(S); .concat("f=", f(x, "y"), T); .print(T);
   .concat("", "", E); .print("[", E, "]");
   .stopMAS.
