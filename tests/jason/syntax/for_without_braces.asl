!start.
+!start <- for (.member(X,[1])) .print(X).
