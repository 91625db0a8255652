// coordinator.asl: forms the team, starts it, and collects how well each learner did.
//
// Percepts from the runner: learners(Ls) (every learner's JID), team_size(N).
// Learners tell `ready` until started; when all N are ready the coordinator asks each to
// `achieve train`, so nobody starts before its teammates can hear it. At the end each
// learner tells `evaluated(Mean, Success)`; the coordinator notes the best and finishes.

@learner_ready
+ready[source(L)] : team_size(N) & .count(ready[source(_)], N) & not started <-
    +started;
    .findall(P, ready[source(P)], Team);
    .send(Team, achieve, train).

@learner_evaluated
+evaluated(M, S)[source(L)] : team_size(N) & .count(evaluated(_, _)[source(_)], N) & not concluded <-
    +concluded;
    .findall([Success, Mean], evaluated(Mean, Success)[source(_)], Results);
    .max(Results, [BestSuccess, BestMean]);
    ?evaluated(BestMean, BestSuccess)[source(Best)];
    +best(Best, BestSuccess, BestMean);
    .finish.
