// learner.asl: the plan library of a Q-learning BDI agent.
//
// The plans decide what to do and when; the .rl_* internal actions (bdi_rl/bdi/actions.py)
// do the numerical work. Plans shared with the other learners' libraries are in lib/,
// included where they belong (an include is resolved beside this file: copy lib/ with it).
// Percepts arrive as beliefs annotated source(percept):
//   mode(step|episode)  env(Id)  episodes_target(N)  eval_episodes(N)     (static)
//   episode(N)  state(S)  pos(X,Y) (grid worlds)  outcome(goal|hole|timeout|failed)
//   last_return(R)  epsilon(E)  episodes_done(N)  training_done  eval(Mean,Success)
// Loops are `while` loops: a tail-recursive !goal would grow the intention stack.
// Trust: anyone may tell this agent a belief (it keeps the teller in source(...)), but none
// can steer it: percepts cannot be told (the agent refuses them), and no plan here acts on a
// told belief. The counters below only count (nothing reads them to decide), so they are
// plain beliefs: reading them as [source(self)] cost ~7 % of episode-mode throughput.

successes(0).
failures(0).

!start.

// -- start, evaluate, finish: @start (!train; !evaluate; !finish), @evaluate, @finish -------
{ include("lib/lifecycle.asl") }

// -- training, step granularity: every env step is one !navigate iteration --------------
@train_steps
+!train : mode(step) <-
    while (not training_done) { !episode }.

// -- training, episode granularity: Python runs each episode, plans see its outcome ------
@train_episodes
+!train : mode(episode) <-
    while (not training_done) { .rl_run_episode }.

// -- one episode (@episode) of !navigate steps (@navigate: choose, act, update Q) ----------
{ include("lib/episode.asl") }

// -- success, failure and the step limit, as the env reports them -------------------------
@success
+outcome(goal) : successes(N) <- -+successes(N + 1).

@failure
+outcome(hole) : failures(N) <- -+failures(N + 1).

@step_limit
+outcome(timeout) : failures(N) <- -+failures(N + 1).
