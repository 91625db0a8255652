// .substring: test, position, enumeration
!start.
+!start <- if (.substring("lo", "hello")) { .print("lo in hello") };
   .substring("l", "hello", P); .print("first at ", P);
   .findall(Q, .substring("l", "hello", Q), L); .print(L);
   .substring(Sub, "abcdef", 2, 4); .print(Sub);
   .substring(Tail, "abcdef", 3); .print(Tail);
   .stopMAS.
