// coordinator.asl: forms the team, starts it, and leaves it with its best policy.
//
// Percepts from the runner: learners(Ls) (every learner's JID), team_size(N), trusted(J).
// 1. Learners tell `ready` until started; when all N are ready the coordinator asks each to
//    `achieve train`, so nobody starts before its teammates can hear it.
// 2. Each learner tells `evaluated(Mean, Success)` after training. The best one is noted;
//    every learner whose mean return is more than adopt_margin below it is asked to
//    `achieve adopt_policy_of(Best)`, the others to `achieve finish`.
// 3. An adopter asks Best for its policy itself (askOne) and tells `adopted(Mean, Success,
//    StatesChanged)`, or `kept_own(Mean, Success)` when Best did not give it one. Once every
//    adopter has told either, the best learner (which served the policy) is asked to finish,
//    and the coordinator finishes too.
//
// Trust: any XMPP client may tell the coordinator `ready` or `evaluated(...)`; only the
// team's learners count. A plan for a told belief requires trusted(L) (an agent of the
// experiment, or a JID of the spec's [xmpp] trust) and membership of learners(Ls): a trusted
// outside client is not a learner and must not take a learner's place in the count. What
// counts is noted as the coordinator's own beliefs (ready_learner, result, adopting ...),
// written and read as [source(self)], so a stranger's `tell started` or `tell best(...)` is
// not one of them; percepts (learners, team_size, trusted) cannot be told at all.

adopt_margin(0)[source(self)].  // how far (mean return) a learner may trail the best and keep
                                // its own policy. 0: everyone below the best takes the best
                                // policy measured, which costs one evaluation and at worst
                                // swaps a policy for an equal one.

// -- 1. start the team once every learner is ready ------------------------------------------
@learner_ready
+ready[source(L)] : trusted(L) & learners(Ls) & .member(L, Ls) & not ready_learner(L)[source(self)] <-
    +ready_learner(L)[source(self)].

@all_ready
+ready_learner(_)[source(self)] : team_size(N) & .count(ready_learner(_)[source(self)], N)
                                  & not started[source(self)] <-
    +started[source(self)];
    ?learners(Team);
    .send(Team, achieve, train).

// -- 2. judge the learners once every one has reported --------------------------------------
@learner_evaluated
+evaluated(Mean, Success)[source(L)] : trusted(L) & learners(Ls) & .member(L, Ls)
                                       & not result(L, _, _)[source(self)] <-
    +result(L, Mean, Success)[source(self)].

@all_evaluated
+result(_, _, _)[source(self)] : team_size(N) & .count(result(_, _, _)[source(self)], N)
                                 & not concluded[source(self)] <-
    +concluded[source(self)];
    .findall([Mean, Success], result(_, Mean, Success)[source(self)], Results);
    .max(Results, [BestMean, BestSuccess]);
    ?result(Best, BestMean, BestSuccess)[source(self)];
    +best(Best, BestMean, BestSuccess)[source(self)];
    for (result(P, Mean, _)[source(self)]) { !judge(P, Mean) };
    // every verdict is decided before any is sent, so no reply can race the decision
    if (adopting(_)[source(self)]) {
        for (adopting(P)[source(self)]) { .send(P, achieve, adopt_policy_of(Best)) };
        for (keeps_own(P)[source(self)]) { .send(P, achieve, finish) }
    } else {
        for (keeps_own(P)[source(self)]) { .send(P, achieve, finish) };
        !finish_team
    }.

@keep_best
+!judge(P, _) : best(P, _, _)[source(self)] <- true.

@adopt_better
+!judge(P, Mean) : best(_, BestMean, _)[source(self)] & adopt_margin(G)[source(self)]
                   & Mean < BestMean - G <- +adopting(P)[source(self)].

@keep_own
+!judge(P, _) <- +keeps_own(P)[source(self)].

// -- 3. once every adopter has its new policy (or kept its own), the team is done ----------
@learner_adopted
+adopted(_, _, _)[source(P)] : trusted(P) & adopting(P)[source(self)] <- -adopting(P)[source(self)].

@learner_kept_own
+kept_own(_, _)[source(P)] : trusted(P) & adopting(P)[source(self)] <- -adopting(P)[source(self)].

// A belief removal picks its plan the moment it happens: only the last one sees none left.
// [source(self)] in the trigger: a stranger's `untell adopting(...)` of its own told
// adopting(...) must not run these plans.
@all_adopted
-adopting(_)[source(self)] : not adopting(_)[source(self)] <- !finish_team.

@still_adopting
-adopting(_)[source(self)] <- true.

// The best learner served the policy; now it may stop, and so may the coordinator.
@finish_team
+!finish_team : best(Best, _, _)[source(self)] <- .send(Best, achieve, finish); .finish.
