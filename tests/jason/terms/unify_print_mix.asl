// bindings seen later through a structure, atom vs string, list patterns, .concat of terms
!start.
+!start <- X = f(Y); Y = 1; .print(X); if (a == "a") { .print(same) } else { .print(diff) };
   if ("a" < "b") { .print(lt) }; if (f(1) = f(A)) { .print(A) };
   [H|T] = [1, 2, 3]; .print(H, " ", T); [P, Q|R] = [a, b]; .print(P, Q, R);
   .print(g(1, "two", 3.5, [four], five(5), ~six, "seven eight"));
   .concat("x", 1.5, "y", [1], f(2), S); .print(S); .concat([1], [2, 3], [], L); .print(L);
   .member(M, [c, a, b]); .print(M); .length([a, [b, c]], N); .print(N);
   .stopMAS.
