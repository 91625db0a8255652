// lib/episode.asl: one episode at step granularity, every env step a !navigate iteration.
//
// Included by learner.asl and team-learner.asl (their mode(step) training loops post !episode).
// Included plans keep their labels (traces show them) and file:line (errors name this file).

// -- one episode: restart, navigate until an outcome, learn from the end ------------------
@episode
+!episode <-
    .rl_reset;
    while (not outcome(_)) { !navigate };
    .rl_end_episode.

// -- navigate and learn: choose an action in the perceived state, act, update Q ----------
@navigate
+!navigate : state(S) <-
    .rl_choose(S, A);
    .rl_act(A).
