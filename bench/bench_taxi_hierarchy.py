"""Env steps until the greedy policy is optimal on Taxi (issue 31): the hierarchy of plans with
its moves learned per sub-goal (asl/taxi-hierarchy.asl) against the flat step-mode learner
(asl/learner.asl), with the same hyper-parameters (agents/taxi-hierarchy.toml's [learning]).

Each learner runs on bdi-rl's mind in this process (the real .rl_* actions, no XMPP: the
same plans and learners ``bdi-rl run`` drives), one seed after another, the two interleaved
per seed. Every ``--every`` training episodes it is evaluated greedily over ``--episodes``
episodes on its own eval env: the hierarchy through its plans (``.rl_begin_eval`` ...
``.rl_end_eval``: the learned moves greedy), the flat learner by its Q-table. It is solved
at the first evaluation whose mean return is the optimal policy's on the same episodes (or
within ``--regret`` of it) (the evaluation's start states are the same each time:
its env is seeded so; Taxi is deterministic, so the optimum of each start is its value by
value iteration on the env's own transition table; ``--regret 0``: optimal from every start
the evaluation met). The issue's ">= 7.9 over 1000 episodes" is a fixed bar an optimal policy
misses on some seeds' start states (seed 3's optimal mean over its 1000 is 7.894). Reported,
per learner, the training env steps then (median, IQM with its 95 % bootstrap CI over the
seeds), and hierarchy ÷ flat per seed.

    python bench/bench_taxi_hierarchy.py --seeds 10
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bdi_rl.bdi.actions import RlBridge  # noqa: E402
from bdi_rl.bdi.checkpointing import CheckpointSchedule  # noqa: E402
from bdi_rl.bdi.episode import EpisodeSession, Percepts  # noqa: E402
from bdi_rl.bdi.mind import load_mind  # noqa: E402
from bdi_rl.bdi.policycache import PolicyCache  # noqa: E402
from bdi_rl.bdi.runtime import Actions  # noqa: E402
from bdi_rl.readers.curves import iqm, iqm_ci  # noqa: E402
from bdi_rl.rl.envs import make_env  # noqa: E402
from bdi_rl.rl.qlearning import EvalResult, LearningConfig, QLearner  # noqa: E402
from bdi_rl.spec import load_spec  # noqa: E402
from bdi_rl.trace.kinds import TraceLevel  # noqa: E402
from bdi_rl.trace.tracer import Tracer  # noqa: E402


def optimal_mean(seed: int, episodes: int) -> float:
    """The optimal policy's mean return over the episodes an evaluation of learner ``seed``
    plays: its eval env seeded ``seed + 10_000`` at the first reset (as ``EpisodeSession``
    and ``qlearning.evaluate`` seed it), each episode played by the optimal policy (from the
    values of value iteration on the env's own transition table). Taxi's steps draw from the
    env's random stream, so the starts after the first depend on how long each episode was:
    a learner's greedy episodes meet these same starts exactly when each is as short as the
    optimum's."""
    env = make_env("Taxi-v4", {})
    transitions = env.env.unwrapped.P

    def value_of(s: int, a: int, value: np.ndarray) -> float:
        return float(sum(p * (r + (0.0 if done else value[s2])) for p, s2, r, done in transitions[s][a]))

    actions = range(env.n_actions)
    value = np.zeros(env.n_states)
    for _ in range(200):  # undiscounted, every optimal episode is well under 200 steps
        value = np.array([max(value_of(s, a, value) for a in actions) for s in range(env.n_states)])
    returns = []
    for k in range(episodes):
        s, total, over = env.reset(seed=seed + 10_000 if k == 0 else None), 0.0, False
        while not over:
            s, r, terminated, truncated = env.step(max(actions, key=lambda a: value_of(s, a, value)))
            total, over = total + r, terminated or truncated
        returns.append(total)
    return float(np.mean(returns))


#: The hierarchy's training loop, evaluating through its plans every ``every`` episodes.
_EVALUATING_TRAIN = """@train
+!train <- while (not training_done) {{ !episode; !maybe_evaluate }}.

@maybe_evaluate
+!maybe_evaluate : episodes_done(N) & N mod {every} == 0 & eval_episodes(E) <-
    .rl_begin_eval;
    for (.range(_, 1, E)) {{ !episode }};
    .rl_end_eval.

@not_now
+!maybe_evaluate <- true.
"""


def _hierarchy_plans(tmp: Path, every: int) -> Path:
    text = (ROOT / "asl" / "taxi-hierarchy.asl").read_text()
    shipped = "@train\n+!train <- while (not training_done) { !episode }.\n"
    assert shipped in text, "taxi-hierarchy.asl's @train changed: update the bench"
    path = tmp / "taxi-hierarchy-evaluating.asl"
    path.write_text(text.replace(shipped, _EVALUATING_TRAIN.format(every=every)))
    return path


def _solve(
    plans: Path,
    config: LearningConfig,
    seed: int,
    every: int,
    eval_episodes: int,
    budget: int,
    flat: bool,
    regret: float,
) -> int | None:
    """Training env steps at the first greedy evaluation within ``regret`` of the optimum
    (None: not within ``budget`` training episodes)."""
    env = make_env("Taxi-v4", {})
    learner = QLearner(env.n_states, env.n_actions, config, seed=seed)
    tracer = Tracer("bench", "learner@localhost", TraceLevel.EPISODE)
    session = EpisodeSession(
        env,
        learner,
        tracer,
        Percepts(),
        episodes=budget,
        eval_episodes=eval_episodes,
        eval_every=every if flat else 0,  # the flat learner: its Q-table, in Python
        seed=seed,
        state_facts=not flat,  # the hierarchy's spec perceives Taxi's state decoded
    )
    solved: list[int] = []
    record = session.record_eval
    optimum = optimal_mean(seed, eval_episodes)

    def judged(result: EvalResult, seconds: float) -> None:
        record(result, seconds)
        if result.mean_return >= optimum - regret and not solved:
            solved.append(learner.env_steps)

    session.record_eval = judged  # type: ignore[method-assign]

    def stop_once_solved(s: EpisodeSession) -> None:
        if solved:
            s.episodes_target = learner.episodes

    session.on_episode = stop_once_solved
    with tempfile.TemporaryDirectory() as tmp:
        bridge = RlBridge(
            session,
            CheckpointSchedule(session, Path(tmp) / "learner.npz", {}),
            PolicyCache(session, None, None, "learner"),
        )
        actions = Actions()
        bridge.register(actions)
        mind = load_mind(plans, actions, "learner", prepare=lambda m: bridge.start(m, "step"))
        mind.host.print = lambda agent, line: None  # type: ignore[method-assign]
        mind.run()
    tracer.pending.clear()
    return solved[0] if solved else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--every", type=int, default=25, help="training episodes between evaluations")
    parser.add_argument("--episodes", type=int, default=1000, help="greedy episodes per evaluation")
    parser.add_argument("--budget", type=int, default=5000, help="training episodes at most")
    parser.add_argument(
        "--regret", type=float, default=0.0, help="solved: mean return at most this below the optimum's (0: optimal)"
    )
    args = parser.parse_args()
    spec = load_spec(ROOT / "agents" / "taxi-hierarchy.toml")
    learning = spec.learning
    config = LearningConfig(
        alpha=learning.alpha,
        gamma=learning.gamma,
        epsilon_start=learning.epsilon_start,
        epsilon_end=learning.epsilon_end,
        epsilon_decay_episodes=learning.epsilon_decay_episodes,
    )
    with tempfile.TemporaryDirectory() as tmp_name:
        hierarchy = _hierarchy_plans(Path(tmp_name), args.every)
        flat = ROOT / "asl" / "learner.asl"
        steps: dict[str, list[float]] = {"hierarchy": [], "flat": []}
        ratios = []
        for seed in range(1, args.seeds + 1):
            began = time.perf_counter()
            h = _solve(hierarchy, config, seed, args.every, args.episodes, args.budget, False, args.regret)
            f = _solve(flat, config, seed, args.every, args.episodes, args.budget, True, args.regret)
            print(f"seed {seed}: hierarchy {h} env steps, flat {f} ({time.perf_counter() - began:.0f} s)", flush=True)
            if h is None or f is None:
                continue
            steps["hierarchy"].append(h)
            steps["flat"].append(f)
            ratios.append(h / f)
    print()
    print(f"Taxi-v4, solved: {args.episodes} greedy episodes within {args.regret} of the optimum, every {args.every}")
    print("| learner | seeds solved | env steps: median | IQM [95 % CI] |")
    print("|---|---:|---:|---:|")
    if len(ratios) < 2:
        print(f"{len(ratios)} seed(s) solved by both: too few for intervals")
        return
    for name, values in steps.items():
        low, high = iqm_ci(np.array(values))
        print(
            f"| {name} | {len(values)}/{args.seeds} | {statistics.median(values):,.0f} | "
            f"{float(iqm(values)):,.0f} [{float(low[0]):,.0f}, {float(high[0]):,.0f}] |"
        )
    low, high = iqm_ci(np.array(ratios))
    print(
        f"| hierarchy ÷ flat, per seed | | {statistics.median(ratios):.3f} | "
        f"{float(iqm(ratios)):.3f} [{float(low[0]):.3f}, {float(high[0]):.3f}] |"
    )


if __name__ == "__main__":
    main()
