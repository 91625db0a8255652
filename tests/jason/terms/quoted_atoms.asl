// quoted atoms
b('Hello World').
!start.
+!start <- ?b(X); .print(X); .print('simple'); .print('with space');
   if ('simple' == simple) { .print("'simple' is simple") };
   .print(f('A b', c));
   .stopMAS.
