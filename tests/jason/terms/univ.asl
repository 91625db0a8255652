// =.. (univ): Jason 3.2 lists [namespace, functor, arguments, annotations]
!start.
+!start <- f(a, b) =.. L; .print(L);
   T =.. [default, g, [1, 2], []]; .print(T);
   b(1)[x] =.. M; .print(M);
   atom =.. N; .print(N);
   .stopMAS.
