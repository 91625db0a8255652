// taxi-routes.asl: Taxi driven by hand-written routes, the choice among them learned (issue 31).
//
// The passenger is got and put as in taxi-hierarchy.asl, but no move is learned: to reach a
// station the taxi takes one of three routes, each written out (up or down to a row, along it
// to the station's column, then to the station's row): via the top row, the middle row or the
// bottom row. Which one is best depends on where the taxi is and where it is going: the grid's
// walls (between columns 1|2 in rows 0-1, 0|1 and 2|3 in rows 3-4) block the top and bottom
// rows for some crossings, and the middle row, never blocked, is a detour for others. A
// blocked route fails where the wall stopped it (the step into the wall spent), and the taxi
// chooses again from there. The labels carry learned(taxi): the agent learns each route's
// value for each station (the goal !navigate(L)) from each cell (its taxi(Row, Col) belief),
// by SMDP Q-learning over the env steps the route took, exploring by its epsilon.
//
// Without the annotations the first applicable route in source order is taken: the middle
// row, always and from everywhere (never blocked, often a detour). bench/bench_plan_choice.py
// compares the three ways: learned, source order, at random.
//
// Percepts: those of learner.asl, and Taxi's state decoded (the spec's state_facts = true):
// taxi(Row, Col), passenger(P) (a station 0-3, or 4: in the taxi), destination(D) (0-3).
// Actions: 0 south, 1 north, 2 east, 3 west, 4 pickup, 5 dropoff.

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

// -- evaluation through the plans: the learned choices greedy, nothing learned ----------------
@evaluate
+!evaluate : eval_episodes(N) & N > 0 <-
    .rl_begin_eval;
    for (.range(_, 1, N)) { !episode };
    .rl_end_eval.

@no_evaluation
+!evaluate <- true.

// -- the passenger: get, then put ---------------------------------------------------------------
@episode
+!episode <- .rl_reset; !deliver; .rl_end_episode.

@delivered
+!deliver : outcome(_) <- true.
@deliver_get
+!deliver : passenger(P) & P < 4 <- !navigate(P); !act(4); !deliver.
@deliver_put
+!deliver : passenger(4) & destination(D) <- !navigate(D); !act(5); !deliver.

@act_over
+!act(_) : outcome(_) <- true.
@act
+!act(A) <- .rl_act(A).

// -- to station L by one of three routes, chosen by value ------------------------------------------
@navigate_over
+!navigate(_) : outcome(_) <- true.
@navigate_there
+!navigate(L) : at(L) <- true.

@via_middle[learned(taxi)]
+!navigate(L) : station(L, R, C) <- !row(2); !col(C); !row(R).

@via_top[learned(taxi)]
+!navigate(L) : station(L, R, C) <- !row(0); !col(C); !row(R).

@via_bottom[learned(taxi)]
+!navigate(L) : station(L, R, C) <- !row(4); !col(C); !row(R).

// a route a wall stopped: choose again from where the taxi is
@blocked
-!navigate(L) <- !navigate(L).

// -- the moves of a route: a row (never blocked), then a column (a wall may stop it) ---------------
@row_over
+!row(_) : outcome(_) <- true.
@row_there
+!row(R) : taxi(R, _) <- true.
@row_north
+!row(R) : taxi(Y, _) & Y > R <- .rl_act(1); !row(R).
@row_south
+!row(R) <- .rl_act(0); !row(R).

@col_over
+!col(_) : outcome(_) <- true.
@col_there
+!col(C) : taxi(_, C) <- true.
@col_east
+!col(C) : taxi(R, X) & X < C <- .rl_act(2); !moved(R, X); !col(C).
@col_west
+!col(C) : taxi(R, X) <- .rl_act(3); !moved(R, X); !col(C).

@wall  // the taxi did not move: a wall blocks this row, and so the route
+!moved(R, X) : taxi(R, X) & not outcome(_) <- .fail.
@moved
+!moved(_, _) <- true.
