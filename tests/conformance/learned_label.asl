// A plan label's learned annotation (bdi-rl's learned plan selection) changes nothing for an
// agent without a chooser, as for Jason, which keeps a label's annotations and selects the
// first applicable plan in source order; a plan before the learned ones still wins.
// Recorded from Jason 3.2.2 (../shared/jason/run-jason learned_label.asl).
// expect: hug_edge
// expect: special
// expect: first

pos(0, 3).

!start.

+!start <- !cross; !route(1); !route(2).

@hug_edge[learned(pos)]
+!cross <- .print("hug_edge").
@high_road[learned(pos)]
+!cross <- .print("high_road").

@special
+!route(1) <- .print("special").
@first[learned([pos, state])]
+!route(_) : pos(_, 3) <- .print("first").
@second[learned]
+!route(_) <- .print("second").
