// | in rules and contexts
small(1). small(2). big(10).
num(X) :- small(X) | big(X).
!start.
+!start <- .findall(X, num(X), L); .print(L);
   if (big(1) | small(1)) { .print("1 is small or big") };
   .stopMAS.
