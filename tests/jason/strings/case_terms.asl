// .upper_case and .lower_case of terms and numbers
!start.
+!start <- .upper_case(f(a, "b"), U); .print(U);
   .lower_case("MiXeD 123", L); .print(L);
   .upper_case(12, N); .print(N);
   if (.upper_case("a", "A")) { .print("A") };
   .stopMAS.
