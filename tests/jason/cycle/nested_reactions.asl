// belief-event reactions stack on the intention that raised them (sameFocus)
!start.
+!start <- .print(s1); +a; .print(s2); .stopMAS.
+a <- .print(a1); +b; .print(a2).
+b <- .print(b1).
