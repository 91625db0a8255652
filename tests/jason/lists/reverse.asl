// .reverse
!start.
+!start <- .reverse([1,2,3], L); .print(L); .reverse([], E); .print(E);
   .reverse("abc", S); .print(S);
   .stopMAS.
