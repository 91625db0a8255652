"""Env steps until the greedy policy is optimal on Taxi (issue 31): the hierarchy of plans with
its moves learned per sub-goal (asl/taxi-hierarchy.asl) against the flat step-mode learner
(asl/learner.asl), with the same hyper-parameters (agents/taxi-hierarchy.toml's [learning]).

Each learner runs on bdi-rl's mind in this process (the real .rl_* actions, no XMPP: the
same plans and learners ``bdi-rl run`` drives), one seed after another, the two interleaved
per seed. Every ``--every`` training episodes it is evaluated greedily over ``--episodes``
episodes on its own eval env: the hierarchy through its plans (``.rl_begin_eval`` ...
``.rl_end_eval``: the learned moves greedy), the flat learner by its Q-table. It is solved at
the first evaluation that is optimal from every start it met: each episode's return is its
start state's optimal return (Taxi is deterministic; the optimum by value iteration on the
env's own transition table), or, with ``--regret R``, at most R below it on average. The
issue's ">= 7.9 mean over 1000 episodes" is a bar an optimal policy misses on some seeds'
starts (seed 3's optimal mean over its first 1000 is 7.894), and a mean can pass it with a
suboptimal episode. Reported, per learner, the training env steps then (median, IQM with its
95 % bootstrap CI over the seeds; the flat learner censored at ``--flat-budget`` episodes and
evaluated every ``--flat-every``), and hierarchy ÷ flat per seed.

    python bench/bench_taxi_hierarchy.py --seeds 10
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
from bdi_rl.rl.envs import EnvAdapter, make_env  # noqa: E402
from bdi_rl.rl.qlearning import EvalResult, LearningConfig, QLearner  # noqa: E402
from bdi_rl.spec import load_spec  # noqa: E402
from bdi_rl.trace.kinds import TraceLevel  # noqa: E402
from bdi_rl.trace.tracer import Tracer  # noqa: E402


@functools.cache
def optimal_values() -> np.ndarray:
    """Each Taxi state's optimal (undiscounted) return, by value iteration on the env's own
    transition table (Taxi is deterministic: every start's optimum is one number)."""
    env = make_env("Taxi-v4", {})
    transitions = env.env.unwrapped.P  # type: ignore[attr-defined]  # Taxi's own, not on gymnasium's Env

    def value_of(s: int, a: int, value: np.ndarray) -> float:
        return float(sum(p * (r + (0.0 if done else value[s2])) for p, s2, r, done in transitions[s][a]))

    value = np.zeros(env.n_states)
    for _ in range(200):  # every optimal episode is well under 200 steps
        value = np.array([max(value_of(s, a, value) for a in range(env.n_actions)) for s in range(env.n_states)])
    return value


class StartsRecorded:
    """An eval env that keeps each episode's start state and return, so that an evaluation is
    judged start by start: its regret is the mean, over its episodes, of the start's optimal
    return less the episode's. (A mean return against the optimal policy's mean would not do:
    Taxi's steps draw from the env's random stream, so one episode of another length changes
    every later start.)"""

    def __init__(self, env: EnvAdapter) -> None:
        self.env = env
        self.episodes: list[list[float]] = []  # [start state, return]

    def reset(self, seed: int | None = None) -> int:
        state = self.env.reset(seed)
        self.episodes.append([state, 0.0])
        return state

    def step(self, a: int) -> tuple[int, float, bool, bool]:
        result = self.env.step(a)
        self.episodes[-1][1] += result[1]
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def regret(self) -> float:
        """The evaluation's mean regret (0: optimal from every start it met); then forgotten."""
        optimum = optimal_values()
        regrets = [optimum[int(start)] - total for start, total in self.episodes]
        self.episodes.clear()
        return float(np.mean(regrets))


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


def evaluating_plans(source: Path, text: str, tmp: Path, every: int) -> Path:
    """``text`` (plans of ``source``'s shape: ``@train`` as taxi-hierarchy.asl's) with its
    training loop evaluating through its plans every ``every`` episodes, written in ``tmp``."""
    shipped = "@train\n+!train <- while (not training_done) { !episode }.\n"
    assert shipped in text, f"{source.name}'s @train changed: update the bench"
    path = tmp / f"{source.stem}-evaluating.asl"
    path.write_text(text.replace(shipped, _EVALUATING_TRAIN.format(every=every)))
    return path


@dataclass(frozen=True)
class Solved:
    """One learner's result on one seed."""

    steps: int | None
    """Training env steps when its greedy evaluation first was optimal (None: never)."""
    budget_steps: int
    """Training env steps it made in all (its budget's, when never solved)."""
    last_return: float
    """Its last evaluation's mean return."""
    last_regret: float
    """Its last evaluation's mean regret per episode (0 when solved at ``--regret 0``)."""


def solve(
    plans: Path,
    config: LearningConfig,
    seed: int,
    every: int,
    eval_episodes: int,
    budget: int,
    flat: bool,
    regret: float,
) -> Solved:
    """Training env steps at the first greedy evaluation within ``regret`` of the optimum
    (None: not within ``budget`` training episodes), and the env steps trained."""
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
    starts = StartsRecorded(make_env("Taxi-v4", {}))
    session._eval_env = starts  # type: ignore[assignment]  # the eval env it would make, recorded
    regrets: list[float] = []
    returns: list[float] = []

    def judged(result: EvalResult, seconds: float) -> None:
        record(result, seconds)
        returns.append(result.mean_return)
        regrets.append(starts.regret())
        if regrets[-1] <= regret + 1e-9 and not solved:
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
        mind.host.print = lambda agent, text: None  # type: ignore[method-assign]
        mind.run()
    tracer.pending.clear()
    return Solved(solved[0] if solved else None, learner.env_steps, returns[-1], regrets[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--every", type=int, default=25, help="training episodes between evaluations")
    parser.add_argument("--episodes", type=int, default=1000, help="greedy episodes per evaluation")
    parser.add_argument("--budget", type=int, default=5000, help="the hierarchy's training episodes at most")
    parser.add_argument(
        "--flat-budget", type=int, default=20_000, help="the flat learner's training episodes at most (censored there)"
    )
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument(
        "--flat-every", type=int, default=100, help="the flat learner's training episodes between evaluations"
    )
    parser.add_argument(
        "--regret", type=float, default=0.0, help="solved: mean regret per episode at most this (0: optimal everywhere)"
    )
    args = parser.parse_args()
    config = load_spec(ROOT / "agents" / "taxi-hierarchy.toml").learning  # the spec's [learning], whole
    with tempfile.TemporaryDirectory() as tmp_name:
        shipped = ROOT / "asl" / "taxi-hierarchy.asl"
        hierarchy = evaluating_plans(shipped, shipped.read_text(), Path(tmp_name), args.every)
        flat = ROOT / "asl" / "learner.asl"
        steps: dict[str, list[float]] = {"hierarchy": [], "flat": []}
        censored = 0
        ratios = []
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            began = time.perf_counter()
            h = solve(hierarchy, config, seed, args.every, args.episodes, args.budget, False, args.regret)
            f = solve(flat, config, seed, args.flat_every, args.episodes, args.flat_budget, True, args.regret)
            flat_steps = f.steps if f.steps is not None else f.budget_steps
            print(
                f"seed {seed}: hierarchy {h.steps} env steps, flat {f.steps} "
                f"(its budget: {f.budget_steps} env steps; {time.perf_counter() - began:.0f} s)",
                flush=True,
            )
            if h.steps is None:
                continue  # the hierarchy's own censoring is reported in its row's count
            censored += f.steps is None
            steps["hierarchy"].append(h.steps)
            steps["flat"].append(flat_steps)
            ratios.append(h.steps / flat_steps)
    print()
    print(
        f"Taxi-v4, solved: {args.episodes} greedy episodes, mean regret <= {args.regret} "
        f"(0: optimal from every start), evaluated every {args.every} episodes (flat: {args.flat_every})"
    )
    if censored:
        print(
            f"flat not solved within {args.flat_budget} episodes on {censored} seed(s): its env steps there are "
            "the budget's (a lower bound), so its row and the ratios are bounds (flat >=, ratio <=)"
        )
    print("| learner | seeds solved | env steps: median | IQM [95 % CI] |")
    print("|---|---:|---:|---:|")
    if len(ratios) < 2:
        print(f"{len(ratios)} seed(s) solved by the hierarchy: too few for intervals")
        return
    solved = {"hierarchy": len(ratios), "flat": len(ratios) - censored}
    for name, values in steps.items():
        low, high = iqm_ci(np.array(values))
        print(
            f"| {name} | {solved[name]}/{args.seeds} | {statistics.median(values):,.0f} | "
            f"{float(iqm(values)):,.0f} [{float(low[0]):,.0f}, {float(high[0]):,.0f}] |"
        )
    low, high = iqm_ci(np.array(ratios))
    print(
        f"| hierarchy ÷ flat, per seed | | {statistics.median(ratios):.3f} | "
        f"{float(iqm(ratios)):.3f} [{float(low[0]):.3f}, {float(high[0]):.3f}] |"
    )


if __name__ == "__main__":
    main()
