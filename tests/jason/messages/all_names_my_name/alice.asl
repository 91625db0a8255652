!start.
+!start <- .my_name(Me); .all_names(L); .delete(Me, L, Others); .sort(Others, S); .print(Me, " knows ", S);
   .length(L, N); .print(N, " agents");
   if (.my_name(alice)) { .print("I am alice") };
   for (.member(A, S)) { .send(A, askOne, name(X), name(X)); .print(A, " says ", X) };
   .stopMAS.
