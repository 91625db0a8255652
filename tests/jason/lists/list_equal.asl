// list comparison and unification with variables inside
!start.
+!start <- if ([1,2] == [1,2]) { .print("equal") };
   [X, 2] = [1, Y]; .print(X, " ", Y);
   if ([1,2] < [1,3]) { .print("[1,2] < [1,3]") } else { .print("not less") };
   .stopMAS.
