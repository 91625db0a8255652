// backtracking over conjunctions in a rule and in a plan context
edge(a, b). edge(b, c). edge(a, d). edge(d, c).
path2(X, Z) :- edge(X, Y) & edge(Y, Z).
!start.
+!start <- .findall(Y, path2(a, Y), L); .print(L); !pick; .stopMAS.
+!pick : edge(a, X) & edge(X, c) & X \== b <- .print("via ", X).
