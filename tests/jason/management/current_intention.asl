// .current_intention: the intention's id and intended means
!start.
+!start <- !g(1).
@gp +!g(X) <- .current_intention(intention(Id, Stack)); .length(Stack, N); .print("depth ", N);
   Stack = [im(L, T, _, _)|_]; .print(L); .print(T); .stopMAS.
