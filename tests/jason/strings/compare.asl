// comparing strings
!start.
+!start <- if ("abc" < "abd") { .print("abc < abd") };
   if ("b" > "abc") { .print("b > abc") };
   if ("abc" == "abc") { .print("equal") };
   if ("abc" \== abc) { .print("string is not atom") };
   .sort(["pear", "apple", "fig"], L); .print(L);
   .stopMAS.
