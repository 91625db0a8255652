// a failing sub-goal of a stacked belief reaction, handled by its own failure plan
!start.
+!start <- +a; .print("after a"); .stopMAS.
+a <- !g; .print("a goes on").
+!g <- .fail.
-!g <- .print("g handler").
