// integers and floats compare by value
!start.
+!start <- if (3 == 3.0) { .print("3 == 3.0") }; if (3 = 3.0) { .print("3 = 3.0") };
   X = 6 / 2; .print(X); if (X == 3) { .print("6/2 == 3") };
   .stopMAS.
