!start.
+!start
  .print(a).
