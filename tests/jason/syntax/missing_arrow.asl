!start.
+!start .print(a).
