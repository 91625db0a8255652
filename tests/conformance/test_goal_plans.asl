// Test goals: ?q answers from beliefs and rules first; with no answer, a +?q plan runs and
// its bindings answer the test (Jason). test_goal_no_plan.asl: with neither, it fails.
// expect: belief 5
// expect: plan 10
// expect: trigger 42
// expect: computed 7
// pyagentspeak: same

price(apple, 5).
base(3).

!start.

+!start <-
    ?price(apple, A); .print("belief ", A);
    ?price(pear, P); .print("plan ", P);
    ?answer(N); .print("trigger ", N);
    ?sum(4, S); .print("computed ", S).

+?price(pear, P) <- P = 10.
+?answer(42).
+?sum(X, S) : base(B) <- S = X + B.
