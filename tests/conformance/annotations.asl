// Sources and annotations: beliefs a plan adds are source(self), percepts source(percept);
// plan labels and their annotations are readable through .current_intention.
// expect: self source
// expect: label show[atomic,prio(2)]
// expect: removed from self only
// belief: seen(1)[source(self)]
// absent: seen(2)

!start.

@show[atomic, prio(2)]
+!start <-
    +seen(1); +seen(2)[mark];
    if (seen(1)[source(self)]) { .print("self source") };
    .current_intention(intention(_, [im(Label, _) | _]));
    .print("label ", Label);
    -seen(2);
    if (not seen(2)) { .print("removed from self only") }.
