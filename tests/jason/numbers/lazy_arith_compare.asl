// arithmetic left as a term while an operand is unbound is evaluated when compared later
!start.
+!start <- X = Y + 1; Y = 2; if (X > 2) { .print(gt) }; if (X == 3) { .print(eq) }; if (X < 4) { .print(lt) };
   Z = W * 2; if (Z == Z) { .print(same) }; .print(Z); .stopMAS.
