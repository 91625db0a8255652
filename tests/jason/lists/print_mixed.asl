// lists of mixed terms printed, .nth, .concat, .sort of strings, .max/.min
!start.
+!start <- L = [3, "b", [c, "d"], e(f, "g")]; .print(L); .print("list: ", L);
   .nth(1, L, N); .print(N); .length(L, Len); .print(Len); .member(X, L); .print(X);
   .concat(L, [z], L2); .print(L2); .sort(["b", "a", "B", "A", "aa"], S); .print(S);
   .max([2.5, 3, -1], M); .print(M); .min(["b", "a"], Mi); .print(Mi);
   .print([], " ", [[]], " ", [1|[2|[3]]]);
   .stopMAS.
