// while (c) { !g }, the shipped loops' shape (one fused instruction): the goal's bindings
// do not leak into the next test; a failure handled by -!g continues the loop.
// expect: step 0 got 0
// expect: step 1 got 10
// expect: handled 2
// expect: step 3 got 30
// expect: done 4 R unbound

i(0).

!start.

+!start <-
    while (i(I) & I < 4) { !step(I, R) };
    ?i(N);
    if (.ground(R)) { .print("done ", N, " R bound") } else { .print("done ", N, " R unbound") }.

+!step(I, R) : I \== 2 <- R = I * 10; .print("step ", I, " got ", R); -i(I); +i(I + 1).
+!step(2, _) <- -i(2); +i(3); .fail.
-!step(I, _) <- .print("handled ", I).
