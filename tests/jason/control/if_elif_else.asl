// if / elif / else
!start.
+!start <- for (.member(X, [1, 5, 10])) { !classify(X) }; .stopMAS.
+!classify(X) <- if (X < 3) { .print(X, " small") } elif (X < 7) { .print(X, " medium") } else { .print(X, " large") }.
