// forager.asl: a Q-learner in level-based foraging (agents/foraging.toml) whose plans keep
// the one convention the task needs: the food is eaten only when both players stand next to
// it and load in the same step, so
//   - when both of us are next to the food, I load;
//   - when I am next to it and my partner is not, I wait for it there (and tell it so once:
//     tell waiting_at(X, Y));
//   - otherwise my learner chooses (.rl_choose): finding the food and each other is learned.
// The learner updates from every move, the convention's included, so its Q-table learns the
// loads and waits the plans make, and its greedy policy (all the world's evaluation plays)
// comes to keep them. (Heading for the food by plan as well was tried and measured worse at
// 30000 episodes: the learners then saw little but the plan's paths; BENCHMARKS.md.)
//
// Percepts: those of learner.asl, plus (bdi_rl/bdi/world.py) pos(X, Y), partner(X, Y) and
// food(X, Y) (gone once eaten), reward(R), world_seat(S) and world_agents(As).

successes(0).
failures(0).

!start.

// -- start, evaluate, finish: @start (!train; !evaluate; !finish), @evaluate, @finish -------
{ include("lib/lifecycle.asl") }

@train_foraging
+!train : mode(step) <-
    while (not training_done) { !episode }.

@forage_episode
+!episode <-
    .rl_reset;
    -told_waiting(_, _)[source(self)];
    while (not outcome(_)) { !navigate };
    .rl_end_episode.

@forage_step
+!navigate : state(S) <-
    !choose(S, A);
    .rl_act(A).

next_to(X, Y, FX, FY) :- X == FX & (Y == FY - 1 | Y == FY + 1).
next_to(X, Y, FX, FY) :- Y == FY & (X == FX - 1 | X == FX + 1).

@load_together
+!choose(_, 5) : pos(X, Y) & partner(PX, PY) & food(FX, FY) & next_to(X, Y, FX, FY) & next_to(PX, PY, FX, FY).

@wait_for_partner
+!choose(_, 0) : pos(X, Y) & food(FX, FY) & next_to(X, Y, FX, FY) <- !tell_waiting(X, Y).

@choose_learned
+!choose(S, A) <- .rl_choose(S, A).

@tell_once
+!tell_waiting(X, Y) : not told_waiting(X, Y)[source(self)] & teammates(Ts) <-
    +told_waiting(X, Y)[source(self)];
    .send(Ts, tell, waiting_at(X, Y)).

@told_already
+!tell_waiting(_, _) <- true.

@success
+outcome(goal) : successes(N) <- -+successes(N + 1).

@failure
+outcome(failed) : failures(N) <- -+failures(N + 1).

@step_limit
+outcome(timeout) : failures(N) <- -+failures(N + 1).
