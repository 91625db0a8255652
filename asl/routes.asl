// routes.asl: crossing CliffWalking by hand-written routes, the choice among them learned.
//
// Two plans answer !cross; their labels carry learned(pos), so when more than one
// applies the agent chooses by the value it has learned for each in the position it is in
// (pos(X, Y): column X, row Y), exploring by its epsilon, instead of taking the first in
// source order. From the start hugging the cliff's edge pays -13 and the high road -17.
// (asl/taxi-routes.asl is a choice whose best answer depends on where the agent is and where it
// is going.) The trace shows each choice and each value learned
// (plan.choice, plan.value); `bdi-rl inspect RUN --kind plan.choice` prints them.
//
// Percepts: those of learner.asl. Actions: 0 up, 1 right, 2 down, 3 left.

!start.

@start
+!start <- !train; !evaluate; .rl_save_qtable; .rl_finish.

@train
+!train <- while (not training_done) { !episode }.

// -- evaluation through the plans: greedy choices, nothing learned (.rl_evaluate would play
// the Q-table of single steps, which these plans never choose from) ----------------------------
@evaluate
+!evaluate : eval_episodes(N) & N > 0 <-
    .rl_begin_eval;
    for (.range(_, 1, N)) { !episode };
    .rl_end_eval.

@no_evaluation
+!evaluate <- true.

@episode
+!episode <-
    .rl_reset;
    while (not outcome(_)) { !cross };
    .rl_end_episode.

// -- the routes: each goes from wherever the agent is ---------------------------------------
@hug_edge[learned(pos)]
+!cross <- !reach_row(2); !reach_col(11); !reach_row(3).

@high_road[learned(pos)]
+!cross <- !reach_row(0); !reach_col(11); !reach_row(3).

// -- moving one step at a time, until there or the episode is over ---------------------------
@row_over
+!reach_row(_) : outcome(_) <- true.
@row_reached
+!reach_row(R) : pos(_, R) <- true.
@row_up
+!reach_row(R) : pos(_, Y) & Y > R <- .rl_act(0); !reach_row(R).
@row_down
+!reach_row(R) <- .rl_act(2); !reach_row(R).

@col_over
+!reach_col(_) : outcome(_) <- true.
@col_reached
+!reach_col(C) : pos(C, _) <- true.
@col_climb  // on the cliff's row (back at the start after a fall): up before any step sideways
+!reach_col(C) : pos(_, 3) <- .rl_act(0); !reach_col(C).
@col_right
+!reach_col(C) : pos(X, _) & X < C <- .rl_act(1); !reach_col(C).
@col_left
+!reach_col(C) <- .rl_act(3); !reach_col(C).
