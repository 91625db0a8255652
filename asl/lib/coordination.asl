// lib/coordination.asl: agents of one shared world agree on a joint action through their
// plans (included by coordinated-learner.asl).
//
// Percepts of a seated learner (bdi_rl/bdi/world.py): world_seat(S), world_agents(As) (the
// world's agents' JIDs in its order), reward(R) after each joint step, and those of any learner.
// The first of world_agents leads. The protocol, in spade_bdi's native messages:
//   follower -> leader     tell intends(E, K, A)      before acting: my action A at step K of
//                                                     episode E
//   leader                 the joint action of step K once every follower's intention is in,
//                          with the common reward: the best seen so far becomes the agreement
//   leader -> followers    achieve adopt(J, R)        "let us play J (one action per agent, in
//                                                     the world's order): it paid R"
//   follower -> leader     tell accepted(J, R)        followed: J is my agreement now
//                       or tell declined(J, R, Why)   not followed: not from the leader, or
//                                                     worse than the agreement I already hold
// Every agent then plays its part of the agreement, except with probability epsilon (its
// learner's exploration rate), when it asks its learner (.rl_choose): the agreement steers
// what the independent learners see, and their Q-tables come to hold the joint action agreed.
// The trace shows each proposal (msg.send / msg.recv), and the plan that took it
// (@adopt_better) or turned it down (@decline_...), with its reason in the reply.

leader(L) :- world_agents([L | _]).
leading :- .my_name(Me) & world_agents([Me | _]).
followers(Fs) :- world_agents([_ | Fs]).
my_index(I) :- .my_name(Me) & world_agents(As) & index_of(Me, As, 0, I).
index_of(X, [Y | _], I0, I) :- X == Y & I = I0.
index_of(X, [Y | Rest], I0, I) :- X \== Y & index_of(X, Rest, I0 + 1, I).
// what an agent did at step K of episode E: the leader's own move, a follower's told intention
acted(E, K, Me, A) :- .my_name(Me) & did(E, K, A, _)[source(self)].
acted(E, K, P, A) :- intends(E, K, A)[source(P)].

// -- one episode: reset together, step together until the world says it is over -----------
@coordinated_episode
+!episode <-
    .rl_reset;
    -+step_no(0)[source(self)];
    while (not outcome(_)) { !navigate };
    .rl_end_episode.

@coordinated_step
+!navigate : state(S) & episode(E) & step_no(K)[source(self)] <-
    !choose(S, A);
    !announce(E, K, A);
    .rl_act(A);
    -+step_no(K + 1)[source(self)];
    !observe(E, K, A).

// -- choosing: the agreement, or my learner's choice when exploring --------------------------
@choose_agreed
+!choose(S, A) : agreed(J, _)[source(self)] & epsilon(Eps) & .random(U) & U >= Eps & my_index(I) <-
    .nth(I, J, A).

@choose_learned
+!choose(S, A) <- .rl_choose(S, A).

// -- telling the leader what I am about to do ----------------------------------------------
@announce_to_leader
+!announce(E, K, A) : not leading & leader(L) <- .send(L, tell, intends(E, K, A)).

@announce_none
+!announce(_, _, _) <- true.

// -- the leader: the joint action of each step, and the best one seen --------------------------
@observe_lead
+!observe(E, K, A) : leading & reward(R) <-
    +did(E, K, A, R)[source(self)];
    !note(E, K).

@observe_follow
+!observe(_, _, _) <- true.

@intention_heard
+intends(E, K, _)[source(P)] : leading & followers(Fs) & .member(P, Fs) <- !note(E, K).

@note_complete
+!note(E, K) : did(E, K, _, R)[source(self)] & followers(Fs) & .length(Fs, N) & .count(intends(E, K, _), N) &
               world_agents(As) <-
    .findall(A, .member(P, As) & acted(E, K, P, A), J);
    -did(E, K, _, _)[source(self)];
    for (.member(P, Fs)) { -intends(E, K, _)[source(P)] };
    !consider(J, R).

@note_incomplete
+!note(_, _) <- true.

@consider_better
+!consider(J, R) : not (agreed(_, R0)[source(self)] & R0 >= R) & followers(Fs) <-
    -+agreed(J, R)[source(self)];
    .send(Fs, achieve, adopt(J, R)).

@consider_not_better
+!consider(_, _) <- true.

// -- a follower: take the leader's proposal, or say why not ----------------------------------
@adopt_better
+!adopt(J, R)[source(L)] : leader(L) & not (agreed(_, R0)[source(self)] & R0 > R) <-
    -+agreed(J, R)[source(self)];
    .send(L, tell, accepted(J, R)).

@decline_not_leader
+!adopt(J, R)[source(P)] : not leader(P) <- .send(P, tell, declined(J, R, not_the_leader)).

@decline_worse
+!adopt(J, R)[source(L)] : agreed(J0, R0)[source(self)] <- .send(L, tell, declined(J, R, holds(J0, R0))).
