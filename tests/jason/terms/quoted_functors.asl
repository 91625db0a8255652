// quoted atoms as functors and values; 'b' is not b; sorted by their text with the quotes
'Big'(1).
!start.
+!start <- ?'Big'(X); .print(X); Y = 'with space'; .print(Y); .print(f('A', b, 'b'));
   if ('b' == b) { .print(eq) } else { .print(neq) };
   .sort(['b', a, 'A', "s", 'zz'], L); .print(L); .print('Big'(2)[x]);
   .stopMAS.
