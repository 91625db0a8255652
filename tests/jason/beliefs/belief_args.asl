// beliefs with strings, numbers, lists and structures as arguments
info("text", 3, 2.5, [1,2], f(g(x))).
!start.
+!start <- ?info(S, I, F, L, T); .print(S, " ", I, " ", F, " ", L, " ", T);
   ?info(_, _, _, [H|Tl], f(G)); .print(H, " ", Tl, " ", G);
   .stopMAS.
