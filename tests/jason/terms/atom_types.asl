// .atom, .literal, .structure, .list on various terms
!start.
+!start <- for (.member(X, [a, f(1), "s", 3, [1], ~b])) {
     if (.atom(X)) { A = yes } else { A = no };
     if (.literal(X)) { L = yes } else { L = no };
     if (.structure(X)) { S = yes } else { S = no };
     if (.list(X)) { Li = yes } else { Li = no };
     .print(X, " atom ", A, " literal ", L, " structure ", S, " list ", Li)
   };
   .stopMAS.
