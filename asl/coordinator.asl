// coordinator.asl: forms the team, starts it, and leaves it with its best policy.
//
// Percepts from the runner: learners(Ls) (every learner's JID), team_size(N).
// 1. Learners tell `ready` until started; when all N are ready the coordinator asks each to
//    `achieve train`, so nobody starts before its teammates can hear it.
// 2. Each learner tells `evaluated(Mean, Success)` after training. The best one is noted;
//    every learner whose mean return is more than adopt_margin below it is asked to
//    `achieve adopt_policy_of(Best)`, the others to `achieve finish`.
// 3. Once every adopter has told `adopted(Mean, Success, StatesChanged)`, the best learner
//    (which served the policy) is asked to finish, and the coordinator finishes too.

adopt_margin(0).        // how far (mean return) a learner may trail the best and keep its own
                        // policy. 0: everyone below the best takes the best policy measured,
                        // which costs one evaluation and at worst swaps a policy for an equal one.

@learner_ready
+ready[source(L)] : team_size(N) & .count(ready[source(_)], N) & not started <-
    +started;
    .findall(P, ready[source(P)], Team);
    .send(Team, achieve, train).

@learner_evaluated
+evaluated(M, S)[source(L)] : team_size(N) & .count(evaluated(_, _)[source(_)], N) & not concluded <-
    +concluded;
    .findall([Mean, Success], evaluated(Mean, Success)[source(_)], Results);
    .max(Results, [BestMean, BestSuccess]);
    ?evaluated(BestMean, BestSuccess)[source(Best)];
    +best(Best, BestMean, BestSuccess);
    for (evaluated(Mean, _)[source(P)]) { !judge(P, Mean) };
    // every verdict is decided before any is sent, so no reply can race the decision
    if (adopting(_)) {
        for (adopting(P)) { .send(P, achieve, adopt_policy_of(Best)) };
        for (keeps_own(P)) { .send(P, achieve, finish) }
    } else {
        for (keeps_own(P)) { .send(P, achieve, finish) };
        !finish_team
    }.

@keep_best
+!judge(P, _) : best(P, _, _) <- true.

@adopt_better
+!judge(P, Mean) : best(_, BestMean, _) & adopt_margin(G) & Mean < BestMean - G <- +adopting(P).

@keep_own
+!judge(P, _) <- +keeps_own(P).

@learner_adopted
+adopted(_, _, _)[source(P)] <- -adopting(P).

// A belief removal picks its plan the moment it happens: only the last one sees none left.
@all_adopted
-adopting(_) : not adopting(_) <- !finish_team.

@still_adopting
-adopting(_) <- true.

// The best learner served the policy; now it may stop, and so may the coordinator.
@finish_team
+!finish_team : best(Best, _, _) <- .send(Best, achieve, finish); .finish.
