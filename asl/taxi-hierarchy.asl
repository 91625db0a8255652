// taxi-hierarchy.asl: Taxi as a hierarchy of goals and plans (after Dietterich's MAXQ): deliver
// the passenger by getting them (navigate to their station, pick up) and putting them (navigate
// to the destination, drop off). The plans above the moves are written; the moves are learned
// per sub-goal: each !navigate(L) has its own Q-table (.rl_choose_in / .rl_update_in) over the
// taxi's cell alone (25 abstract states, where the flat learner's table has all 500 states), so
// what it learns going to a station serves every passenger and destination.
//
// Percepts: those of learner.asl, and Taxi's state decoded (the spec's state_facts = true):
// taxi(Row, Col), passenger(P) (a station 0-3, or 4: in the taxi), destination(D) (0-3). Actions: 0 south, 1 north,
// 2 east, 3 west, 4 pickup, 5 dropoff.

station(0, 0, 0).  // R
station(1, 0, 4).  // G
station(2, 4, 0).  // Y
station(3, 4, 3).  // B
at(L) :- taxi(R, C) & station(L, R, C).

!start.

@start
+!start <- !train; !evaluate; .rl_save_qtable; .rl_finish.

@train
+!train <- while (not training_done) { !episode }.

// -- evaluation through the plans: the learned moves greedy, nothing learned ------------------
@evaluate
+!evaluate : eval_episodes(N) & N > 0 <-
    .rl_begin_eval;
    for (.range(_, 1, N)) { !episode };
    .rl_end_eval.

@no_evaluation
+!evaluate <- true.

// -- the hierarchy ----------------------------------------------------------------------------
@episode
+!episode <- .rl_reset; !deliver; .rl_end_episode.

@delivered
+!deliver : outcome(_) <- true.
@deliver_get
+!deliver : passenger(P) & P < 4 <- !get(P); !deliver.
@deliver_put
+!deliver : passenger(4) & destination(D) <- !put(D); !deliver.

@get
+!get(L) <- !navigate(L); !act(4).

@put
+!put(D) <- !navigate(D); !act(5).

@act_over
+!act(_) : outcome(_) <- true.
@act
+!act(A) <- .rl_act(A).

// -- navigating to station L: one learned move at a time, until there -------------------------
@navigate_over
+!navigate(_) : outcome(_) <- true.
@navigate_there
+!navigate(L) : at(L) <- true.
@navigate_step
+!navigate(L) : taxi(R, C) <-
    .rl_choose_in(nav(L), R * 5 + C, A);
    .rl_act(A);
    !learn(L, R * 5 + C, A);
    !navigate(L).

@learn_arrived
+!learn(L, S, A) : taxi(R, C) & (at(L) | outcome(_)) <- .rl_update_in(nav(L), S, A, R * 5 + C, true).
@learn_on
+!learn(L, S, A) : taxi(R, C) <- .rl_update_in(nav(L), S, A, R * 5 + C, false).
