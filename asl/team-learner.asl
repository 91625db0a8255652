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
//   me -> B             askOne policy(P)[source(self)]   B's own greedy policy (not one B was
//                                               told), within policy_timeout(T) ms; B's +?policy
//                                               plan answers (.rl_policy)
//   me -> coordinator   tell adopted(Mean, Success, StatesChanged)
//                   or  tell kept_own(Mean, Success)   B did not answer in time, had nothing to
//                                               give, or gave a malformed policy: -!adopt_policy_of
// What teammates tell me becomes knowledge for my Q-learner: hazards and goals as priors on
// the Q-values of the moves that may land there, experience as Q-updates (.rl_replay).
// A learner stays up until the coordinator says finish: a teammate may still ask for its policy.
//
// Trust: any XMPP client may tell me anything; it becomes a belief with its teller in
// source(...), and that is all. The runtime perceives trusted(J) for every other agent of the
// experiment and every JID of the spec's [xmpp] trust, and
//   - a plan for a told belief requires trusted(P) of its source P;
//   - my own notes (training, share_every, hazards I found ...) are written and read with
//     [source(self)], so a stranger's `tell training` or `tell share_every(0)` is not one of them;
//   - percepts (state, outcome, training_done, coordinator, teammates, trusted ...) cannot be
//     told at all: the agent refuses them.

share_every(10)[source(self)].  // episodes between experience messages (0: never share);
                                // a spec's beliefs = ["share_every(5)"] replaces it (as source(self))
policy_timeout(10000)[source(self)].  // ms an adopter waits for the best learner's policy

// What I know of a cell: found myself, or told by someone I trust (a stranger's tell is not
// knowledge). I tell my teammates only what none of us knows yet.
known_hazard(X, Y) :- hazard(X, Y)[source(self)].
known_hazard(X, Y) :- hazard(X, Y)[source(P)] & trusted(P).
known_goal(X, Y) :- goal_at(X, Y, _)[source(self)].
known_goal(X, Y) :- goal_at(X, Y, _)[source(P)] & trusted(P).

!join.

// -- joining: the coordinator starts everyone at once, so no teammate misses a message -----
@join_team
+!join : coordinator(C) <-
    .rl_record_experience;
    while (not training[source(self)]) { .send(C, tell, ready); .wait(2000) }.

@join_alone
+!join <- .rl_record_experience; !train.

// -- training, as learner.asl, plus sharing after each episode ------------------------------
@train_on_request
+!train : not training[source(self)] <-
    +training[source(self)];
    if (mode(episode)) {
        while (not training_done) { .rl_run_episode; !share }
    } else {
        while (not training_done) { !episode; !share }
    };
    .rl_evaluate;
    .rl_save_qtable;
    !report.

// one episode (@episode) of !navigate steps (@navigate), as learner.asl
{ include("lib/episode.asl") }

// -- sharing experience ----------------------------------------------------------------
@share_due
+!share : share_every(K)[source(self)] & K > 0 & episodes_done(N) & N mod K == 0 <- !share_all.

@share_not_due
+!share <- true.

@share_all
+!share_all : teammates(Team) & Team \== [] & share_every(K)[source(self)] & K > 0 <-
    .rl_experience(Batches);
    for (.member(E, Batches)) { .send(Team, tell, experience(E)) }.

@share_nothing
+!share_all <- true.

@learn_from_peer
+experience(E)[source(P)] : trusted(P) & not training_done <- .rl_replay(E); -experience(E)[source(P)].

@too_late_to_learn
+experience(E)[source(P)] : trusted(P) <- -experience(E)[source(P)].

// -- what I find, my teammates are told; what they find becomes my prior --------------------
@found_hazard
+outcome(hole) : pos(X, Y) & not known_hazard(X, Y) & teammates(Team) <-
    +hazard(X, Y)[source(self)];
    .send(Team, tell, hazard(X, Y)).

// Once the episode is closed (last_return is this episode's, in step mode as in episode mode).
@found_goal
+episodes_done(_) : outcome(goal) & pos(X, Y) & last_return(R) & not known_goal(X, Y) & teammates(Team) <-
    +goal_at(X, Y, R)[source(self)];
    .send(Team, tell, goal_at(X, Y, R)).

// trusted(P) also keeps my own finds (source(self)) out: they are in my Q-values already.
@told_hazard
+hazard(X, Y)[source(P)] : trusted(P) <- .rl_hazard(X, Y).

@told_goal
+goal_at(X, Y, R)[source(P)] : trusted(P) <- .rl_goal(X, Y, R).

// -- the end: tell the coordinator how good my greedy policy is, and do as it says --------
@report_to_coordinator
+!report : coordinator(C) & eval(Mean, Success) <- .send(C, tell, evaluated(Mean, Success)).

@report_nobody
+!report <- .rl_finish.

@finish_on_request
+!finish[source(C)] : coordinator(C) <- .rl_finish.

// Requests come only from trusted agents (the agent refuses the others' achieve and asks).
// The ask waits for Best's answer; what it cannot get (untell: false, or timeout) does not
// unify with policy(P), so the .send fails and -!adopt_policy_of takes over.
@adopt_on_request
+!adopt_policy_of(Best)[source(C)] : coordinator(C) & policy_timeout(T)[source(self)] <-
    .send(Best, askOne, policy(P)[source(self)], policy(P), T);
    .rl_adopt_policy(P, Changed);
    .rl_evaluate;
    .rl_save_qtable;
    ?eval(Mean, Success);
    .send(C, tell, adopted(Mean, Success, Changed));
    .rl_finish.

// Best did not answer in time (gone, or a stranger's name), had no policy to give, or gave
// one .rl_adopt_policy refused (it changes nothing then): my own policy stands, and the
// coordinator hears so, or it would wait for me forever.
@keep_own_policy
-!adopt_policy_of(Best)[source(C)] : coordinator(C) & eval(Mean, Success) <-
    .send(C, tell, kept_own(Mean, Success));
    .rl_finish.

// A teammate asks for my policy: no belief of mine answers policy(P)[source(self)], so this
// plan does (its P is the answer). Only the experiment's agents may ask.
@offer_policy
+?policy(P) <- .rl_policy(P).
