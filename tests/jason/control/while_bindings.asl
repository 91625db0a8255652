// while with a variable: the loop body's bindings
!start.
+!start <- +i(0); while (i(I) & I < 3) { -i(I); +i(I + 1); .print(I) }; .stopMAS.
