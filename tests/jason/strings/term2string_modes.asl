// .term2string: both ways, numbers and lists read back, text that is no term
!start.
+!start <- .term2string(T1, "[1, 2.5, x]"); .length(T1, N); .print(N);
   .term2string(T2, "42"); X = T2 + 1; .print(X);
   .term2string(T3, "hello world"); .print(T3);
   if (.atom(T3)) { .print("an atom") };
   if (.term2string(f(a), "f(a)")) { .print("f(a) is f(a)") };
   if (.term2string(f(a), "f( a )")) { .print("?") } else { .print("the text must be the same") };
   .term2string(p(Y, Y), S); .term2string(Q, S); Q = p(1, Z); .print(Z);
   .stopMAS.
