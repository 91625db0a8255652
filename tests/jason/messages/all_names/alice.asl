!start.
+!start <- .all_names(L); .sort(L, S); .print(S); .stopMAS.
