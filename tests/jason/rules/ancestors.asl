// recursive rules, not, and counting their answers
parent(tom, bob). parent(bob, ann). parent(bob, pat). parent(pat, jim).
anc(X, Y) :- parent(X, Y).
anc(X, Y) :- parent(X, Z) & anc(Z, Y).
sibling(X, Y) :- parent(P, X) & parent(P, Y) & X \== Y.
!start.
+!start <- .findall(Y, anc(tom, Y), L); .print(L); .findall(p(X,Y), sibling(X, Y), S); .print(S);
   if (anc(tom, jim)) { .print(yes) }; if (not anc(jim, tom)) { .print(no) };
   .count(anc(_, _), N); .print(N);
   .stopMAS.
