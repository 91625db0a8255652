// an action's error inside a formula makes it false (Jason logs it)
!start.
+!start <- if (.nth(9, [a], _)) { .print("?") } else { .print("if: false") };
   .findall(X, .member(X, notalist), L); .print(L);
   .count(.range(_, a, 3), N); .print(N);
   while (.sort(x, _)) { .print("?") }; .print("while: false");
   !g;
   .stopMAS.
+!g : .union(1, 2, _) <- .print("?").
+!g <- .print("context: false").
