// goal-learner.asl: a Q-learner that keeps a policy cache per goal.
//
// Runs on learner.asl's percepts (episode mode), plus goal(X, Y) where the spec moves the
// goal (env.goals). After a success it asks for its greedy action sequence from the start
// and that sequence's confidence (the exact probability that playing it blindly reaches
// the goal); above policy_threshold(T) it caches it as has_policy(X, Y, Actions, Conf). The
// next episode for that goal plays the cached sequence first (.rl_follow, still learning
// from what happens). If it fails, the cache entry is dropped (cached_policy_failed(X, Y))
// and the agent is back to learning, exploring at least relearn_epsilon(E) until it has a
// new policy for that goal (or, for a goal never reached, until it reaches it; from there
// epsilon falls back at the spec's schedule pace, as after any .rl_set_epsilon). A warm
// start brings the cache of the run it starts from.
// Trust: anyone may tell this agent a belief, but none can steer it: percepts (goal,
// outcome, training_done ...) cannot be told (the agent refuses them), and its notes (the
// cache, the settings below) are written and read as [source(self)], so a told
// has_policy(...) or relearn_epsilon(1.0) is not one of them. A warm start's cache and a
// spec's beliefs = [...] are the agent's own (source(self)).

policy_threshold(0.95)[source(self)].   // lowest confidence a sequence is cached with
relearn_epsilon(0.3)[source(self)].     // exploration while a goal has no policy and was never reached

!start.

// @start (!train; !evaluate; !finish), @evaluate and @finish, as learner.asl
{ include("lib/lifecycle.asl") }

@train
+!train <- while (not training_done) { !episode }.

// -- an episode: the cached policy if there is one, else learning -------------------------
@use_cache
+!episode : goal(X, Y) & has_policy(X, Y, P, C)[source(self)] <-
    .rl_follow(P);
    !judge_cached(X, Y).

@explore_after_failure
+!episode : goal(X, Y) & cached_policy_failed(X, Y)[source(self)] & relearn_epsilon(E)[source(self)]
             & epsilon(Now) & Now < E <-
    .rl_set_epsilon(E);
    .rl_run_episode;
    !after_learning.

@explore_new_goal
+!episode : goal(X, Y) & not reached(X, Y)[source(self)] & relearn_epsilon(E)[source(self)]
             & epsilon(Now) & Now < E <-
    .rl_set_epsilon(E);
    .rl_run_episode;
    !after_learning.

@learn
+!episode <-
    .rl_run_episode;
    !after_learning.

// -- after a cached policy's episode: keep it, or repair the cache --------------------------
@cached_worked
+!judge_cached(X, Y) : outcome(goal) <- true.

@cached_failed
+!judge_cached(X, Y) : has_policy(X, Y, P, C)[source(self)] <-
    -has_policy(X, Y, P, C)[source(self)];
    .rl_drop_policy(X, Y);
    +cached_policy_failed(X, Y)[source(self)].

// -- after a learning episode: remember the goal was reached; maybe cache the way there ----
// One note per goal: +reached(X, Y) (-+ would replace the note of every other goal, as Jason's -+ does).
@learned_success
+!after_learning : outcome(goal) & goal(X, Y) <-
    +reached(X, Y)[source(self)];
    !maybe_cache(X, Y).

@learned_nothing
+!after_learning <- true.

@propose
+!maybe_cache(X, Y) : not has_policy(X, Y, _, _)[source(self)] & policy_threshold(T)[source(self)] <-
    .rl_greedy_plan(P);
    .rl_plan_confidence(P, C);
    !cache_if_confident(X, Y, P, C, T).

@already_cached
+!maybe_cache(X, Y) <- true.

@cache
+!cache_if_confident(X, Y, P, C, T) : C >= T <-
    +has_policy(X, Y, P, C)[source(self)];
    .rl_cache_policy(X, Y, P, C);
    -cached_policy_failed(X, Y)[source(self)].

@not_confident
+!cache_if_confident(X, Y, P, C, T) <- true.
