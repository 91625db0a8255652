// .type: every type of a term, in Jason's order
!start.
+!start <- for (.member(X, [a, 7, "s", [1, Y], f(Y), f(1), ~b, b[x], [], true])) {
     .findall(T, .type(X, T), L); .print(L)
   };
   .findall(T, .type(Z, T), F); .print(F);
   if (.type(f(1), structure)) { .print("f(1) is a structure") };
   if (.type(a, structure)) { .print("?") } else { .print("a is no structure") };
   .stopMAS.
