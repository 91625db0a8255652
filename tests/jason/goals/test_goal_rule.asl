// a test goal answered by a rule
limit(10).
ok(X) :- limit(L) & X < L.
!start.
+!start <- ?ok(3); .print("3 ok"); ?limit(L); .print(L); .stopMAS.
