// Failure plans: an internal action that fails, a goal without an applicable plan, a test
// goal that fails; the -!g plan sees error/error_msg/code_line; the caller goes on after !g.
// expect: in a
// expect: a: ia_failed line 17
// expect: after a
// expect: b: no_applicable
// expect: after b
// expect: c: test_goal_failed
// expect: after c
// expect: outer handled inner's failure: internal_action
// expect: after outer

!start.

+!start <- !a; .print("after a"); !b(1); .print("after b"); !c; .print("after c"); !outer; .print("after outer").

+!a <- .print("in a"); .fail; .print("never").
-!a[error(E), code_line(L)] <- .print("a: ", E, " line ", L).

+!b(X) : X > 5 <- .print("never").
-!b(X)[error(E)] <- .print("b: ", E).

+!c <- ?missing(_).
-!c[error(E)] <- .print("c: ", E).

+!outer <- !inner; .print("never after inner").
+!inner <- .nth(9, [1], _).   // out of the list: Jason's error(internal_action)
-!outer[error(E)] <- .print("outer handled inner's failure: ", E).
