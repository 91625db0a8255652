// team-learner.asl: a Q-learner that learns with its team, after Tan (1993), "Multi-agent
// reinforcement learning: independent vs. cooperative agents": cooperating agents that share
// what they find learn faster than the same agents alone.
//
// Percepts are those of learner.asl, plus the team the runner read from the spec:
//   coordinator(C)   the coordinator's JID (absent in a team without one)
//   teammates(Ts)    the other learners' JIDs
// The protocol, all in spade_bdi's native messages (any XMPP client can take part):
//   me -> coordinator   tell ready                  until the coordinator starts me
//   coordinator -> me   achieve train               every learner is online: go
//   me -> teammates     tell hazard(X,Y)            a cell that ended my episode with nothing
//   me -> teammates     tell goal_at(X,Y,R)         a cell that paid R
//   me -> teammates     tell experience(E)          my transitions, every share_every(N) episodes
//   me -> coordinator   tell evaluated(Mean, Success)
//   coordinator -> me   achieve finish              my policy stands
//                   or  achieve adopt_policy_of(B)  B's greedy policy scored better: take it
//   me -> B             achieve offer_policy        ... so B tells me policy(P)
//   me -> coordinator   tell adopted(Mean, Success, StatesChanged)
// What teammates tell me becomes knowledge for my Q-learner: hazards and goals as priors on
// the Q-values of the moves that may land there, experience as Q-updates (.rl_replay).
// A learner stays up until the coordinator says finish: a teammate may still ask for its policy.

share_every(10).        // episodes between experience messages (0: never share experience)

!join.

// -- joining: the coordinator starts everyone at once, so no teammate misses a message -----
@join_team
+!join : coordinator(C) <-
    .rl_record_experience;
    while (not training) { .send(C, tell, ready); .wait(2000) }.

@join_alone
+!join <- .rl_record_experience; !train.

// -- training, as learner.asl, plus sharing after each episode ------------------------------
@train_on_request
+!train : not training <-
    +training;
    if (mode(episode)) {
        while (not training_done) { .rl_run_episode; !share }
    } else {
        while (not training_done) { !episode; !share }
    };
    .rl_evaluate;
    .rl_save_qtable;
    !report.

@episode
+!episode <-
    .rl_reset;
    while (not outcome(_)) { !navigate };
    .rl_end_episode.

@navigate
+!navigate : state(S) <-
    .rl_choose(S, A);
    .rl_act(A).

// -- sharing experience ----------------------------------------------------------------
@share_due
+!share : share_every(K) & K > 0 & episodes_done(N) & N mod K == 0 <- !share_all.

@share_not_due
+!share <- true.

@share_all
+!share_all : teammates(Team) & Team \== [] & share_every(K) & K > 0 <-
    .rl_experience(Batches);
    for (.member(E, Batches)) { .send(Team, tell, experience(E)) }.

@share_nothing
+!share_all <- true.

@learn_from_peer
+experience(E)[source(P)] : not training_done <- .rl_replay(E); -experience(E)[source(P)].

@too_late_to_learn
+experience(E)[source(P)] <- -experience(E)[source(P)].

// -- what I find, my teammates are told; what they find becomes my prior --------------------
@found_hazard
+outcome(hole) : pos(X, Y) & not hazard(X, Y) & teammates(Team) <-
    +hazard(X, Y);
    .send(Team, tell, hazard(X, Y)).

@found_goal
+outcome(goal) : pos(X, Y) & not goal_at(X, Y, _) & teammates(Team) <-
    ?last_return(R);
    +goal_at(X, Y, R);
    .send(Team, tell, goal_at(X, Y, R)).

@told_hazard
+hazard(X, Y)[source(P)] : P \== self <- .rl_hazard(X, Y).

@told_goal
+goal_at(X, Y, R)[source(P)] : P \== self <- .rl_goal(X, Y, R).

// -- the end: tell the coordinator how good my greedy policy is, and do as it says --------
@report_to_coordinator
+!report : coordinator(C) & eval(Mean, Success) <- .send(C, tell, evaluated(Mean, Success)).

@report_nobody
+!report <- .rl_finish.

@finish_on_request
+!finish[source(C)] : coordinator(C) <- .rl_finish.

@adopt_on_request
+!adopt_policy_of(Best)[source(C)] : coordinator(C) <- .send(Best, achieve, offer_policy).

@offer_policy
+!offer_policy[source(Peer)] <- .rl_policy(P); .send(Peer, tell, policy(P)).

@adopt_policy
+policy(P)[source(Best)] : coordinator(C) <-
    .rl_adopt_policy(P, Changed);
    .rl_evaluate;
    .rl_save_qtable;
    ?eval(Mean, Success);
    .send(C, tell, adopted(Mean, Success, Changed));
    .rl_finish.
