// formulas and unevaluated arithmetic as terms print infix as Jason prints them
!start.
+!start <- X = (a | b & c); .print(X); Y = (not a & b); .print(Y); Z = (A > 1); .print(Z);
   W = (Q * 2 + 1); .print(W); Q = 3; .print(W); V = f(1 + 2, -(3), N - 1); .print(V);
   U = [(a & b), (1 == 1)]; .print(U); T = (X \== Y); .print(T); S = (not (a | b)); .print(S);
   R = (B = f(1)); .print(R); P = (C =.. L); .print(P); O = (D mod 2 + E div 3); .print(O);
   .stopMAS.
