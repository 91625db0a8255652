// .upper_case and .lower_case
!start.
+!start <- .upper_case("Hello World", U); .print(U); .lower_case("Hello World", L); .print(L);
   .upper_case(abc, A); .print(A);
   .stopMAS.
