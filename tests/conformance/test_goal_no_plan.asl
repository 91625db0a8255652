// A test goal with no belief, rule or +?q plan to answer it fails the plan (Jason's
// test_goal_failed); so does one whose +?q plans are not applicable (no_applicable).
// expect: failed test_goal_failed
// expect: failed no_applicable

!start.

+!start <- !missing; !inapplicable.

+!missing <- ?nothing(_).
-!missing[error(E)] <- .print("failed ", E).

+?guarded(X) : false <- X = 1.
+!inapplicable <- ?guarded(_).
-!inapplicable[error(E)] <- .print("failed ", E).
