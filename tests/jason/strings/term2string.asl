// .term2string both ways
!start.
+!start <- .term2string(f(X, "s", 1.5, [a]), S); .print(S); .length(S, N); .print(N);
   .term2string(T, "g(1, b)"); .print(T); T = g(A, B); .print(A, " ", B);
   .term2string(hello, H); .print(H);
   .stopMAS.
