// the context binds variables the body uses
stock(apple, 3). stock(pear, 0).
!buy(apple).
!buy(pear).
+!buy(F) : stock(F, N) & N > 0 <- .print("buying ", F, ", ", N, " left").
+!buy(F) <- .print("no ", F); .wait(10); .stopMAS.
