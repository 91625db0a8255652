// list unification with [H|T]
!start.
+!start <- [H|T] = [1,2,3]; .print(H, " ", T);
   [A, B|C] = [x, y]; .print(A, " ", B, " ", C);
   L = [0|T]; .print(L);
   if ([_] = [1,2]) { .print("?") } else { .print("length mismatch") };
   .stopMAS.
