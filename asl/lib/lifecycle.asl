// lib/lifecycle.asl: a learner's life: train, evaluate greedily, finish.
//
// Included by learner.asl and goal-learner.asl, which post !start and give +!train its plans.
// Included plans keep their labels (traces show them) and file:line (errors name this file).

@start
+!start <- !train; !evaluate; !finish.

// -- evaluation: greedy episodes that never update the table ------------------------------
@evaluate
+!evaluate <- .rl_evaluate; .rl_save_qtable.

@finish
+!finish <- .rl_finish.
