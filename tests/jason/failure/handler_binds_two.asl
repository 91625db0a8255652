// a failure plan binds two variables of the goal: both reach the caller
!start.
+!start <- !g(A, B); .print(A, " ", B); .stopMAS.
+!g(X, Y) <- X = 1; Y = 2; .fail.
-!g(X, Y) <- X = 10; Y = 20.
