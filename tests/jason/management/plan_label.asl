// .plan_label gets a plan term by its label
!start.
@myplan[atomic] +!g(X) : X > 0 <- .print(X); .print(done).
+!start <- .plan_label(P, myplan); .print(P); .stopMAS.
