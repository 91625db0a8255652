// Sources and annotations: beliefs a plan adds are source(self), percepts source(percept);
// plan labels and their annotations are readable through .current_intention (Jason's
// im(Label, Trigger, Body, Unifier), the label with source(self), url, code_line, code_src).
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
    .current_intention(intention(_, [im(Label, _, _, _) | _]));
    if (show[atomic, prio(2), source(self)] = Label) { .print("label show[atomic,prio(2)]") };
    -seen(2);
    if (not seen(2)) { .print("removed from self only") }.
