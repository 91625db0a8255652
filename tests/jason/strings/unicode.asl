// non-ASCII text
!start.
+!start <- .print("café ünï"); .length("café", N); .print(N); .upper_case("straße", U); .print(U); .stopMAS.
