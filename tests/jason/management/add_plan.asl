// .add_plan adds a plan at the end; then it runs
!start.
+!start <- .add_plan({+!hello(X) <- .print("hello ", X)}); !hello(world);
   .add_plan("+!bye <- .print(bye).");  !bye;
   .stopMAS.
