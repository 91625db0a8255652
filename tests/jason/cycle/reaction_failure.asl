// a failure inside a belief reaction stacked on the intention
!start.
!other.
+!start <- .print(s1); +a; .print(s2).
+a <- .print(a1); .fail; .print(a2).
-!start <- .print("start failure plan").
+!other <- .wait(100); .print("other"); .stopMAS.
