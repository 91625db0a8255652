// not in a rule and in a context
bird(tweety). bird(polly). penguin(polly).
flies(X) :- bird(X) & not penguin(X).
!start.
+!start : not flies(polly) <- .findall(X, flies(X), L); .print(L);
   if (not flies(tweety)) { .print("no") } else { .print("tweety flies") };
   .stopMAS.
