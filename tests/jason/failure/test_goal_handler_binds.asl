// a -?g plan that binds the test goal's variable
!start.
+!start <- ?q(X); .print("q ", X); .stopMAS.
+?q(Y) <- Y = 1; .fail.
-?q(Z) <- Z = 5.
