// .asserta puts a belief first, .assertz last; sources
b(5).
!start.
+!start <- .assertz(b(9)); .asserta(b(0)); .asserta(b(1)[source(ann)]);
   .findall(X, b(X), L); .print(L);
   .findall(S, b(1)[source(S)], M); .print(M);
   .stopMAS.
