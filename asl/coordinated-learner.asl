// coordinated-learner.asl: an independent Q-learner in a shared world whose plans agree with
// the world's other agents on a joint action (lib/coordination.asl: the leader proposes the
// best joint action seen, the others follow). Its learner is plain Q-learning; the plans
// decide what it explores, and so which joint action its Q-table comes to prefer.
//
// Percepts: those of learner.asl, plus world_seat(S), world_agents(As) and reward(R).

successes(0).
failures(0).

!start.

// -- start, evaluate, finish: @start (!train; !evaluate; !finish), @evaluate, @finish -------
{ include("lib/lifecycle.asl") }

@train_coordinated
+!train : mode(step) <-
    while (not training_done) { !episode }.

// -- one episode of coordinated steps, the protocol, the agreement --------------------------
{ include("lib/coordination.asl") }

@success
+outcome(goal) : successes(N) <- -+successes(N + 1).

@failure
+outcome(failed) : failures(N) <- -+failures(N + 1).

@step_limit
+outcome(timeout) : failures(N) <- -+failures(N + 1).
