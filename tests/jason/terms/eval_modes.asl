// .eval: true or false, bindings not kept
b(1). b(2).
!start.
+!start <- .eval(A, b(X) & X > 1); .print(A);
   .eval(B, not b(3)); .print(B);
   .eval(C, 1 > 2 | 3 > 2); .print(C);
   .eval(D, b(Y)); if (.ground(Y)) { .print("?") } else { .print(D, " without a binding") };
   if (.eval(true, b(1))) { .print("checked") };
   .stopMAS.
