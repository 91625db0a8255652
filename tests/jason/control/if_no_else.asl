// an if with a false condition and no else does nothing
!start.
+!start <- if (1 > 2) { .print("never") }; .print("went on"); .stopMAS.
