// A goal with no plan at all: error(no_relevant); its -!g plan is the goal's own.
// expect: nobody: no_relevant
// expect: continues

!start.
+!start <- !nobody(1); .print("continues").
-!nobody(_)[error(E)] <- .print("nobody: ", E).
