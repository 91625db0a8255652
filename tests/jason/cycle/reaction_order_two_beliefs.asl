// one plan adds two beliefs: the reactions run in order
!start.
+!start <- +a(1); +a(2); +a(3); .print(done); .stopMAS.
+a(X) <- .print("react ", X).
