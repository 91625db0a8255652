// .delete on strings and lists
!start.
+!start <- .delete("b", "abcb", S); .print(S); .delete(b, [a,b,c,b], L); .print(L);
   .delete(0, [x,y,z], M); .print(M);
   .stopMAS.
