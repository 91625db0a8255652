// Jason's standard order: numbers, strings, lists, atoms and structures; ~a after a; annotations last
!start.
+!start <- .sort([~a, b, a, ~b, a(1), [], [1,2], [1], [0,5], "b", "a", 2, -1.5, f(x)[z], f(x)[a], f(x), g], L); .print(L);
   .sort([f(b), f(a, 1), f(a), f("s"), f(1), f([1]), f(A)], M); .print(M);
   .max([a, "z", [9]], X); .print(X); .min([a, "z", [9], 100], Y); .print(Y);
   if (f(a) < f(b)) { .print(lt) }; if ("abc" < abc) { .print(slt) }; if ([1] < a) { .print(llt) };
   .stopMAS.
