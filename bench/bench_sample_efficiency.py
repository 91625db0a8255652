"""Episodes to solved: BDI learners against a plain Python Q-learning loop, same hyper-parameters.

The plain loop is written here from scratch, the way people write one (``gym.make``, a numpy
table, Python's ``random``), with the shipped spec's hyper-parameters and schedules: alpha
decaying per episode to its floor, epsilon linear from start to end, random tie-breaking,
``q_init``. The BDI learner is the shipped spec run through ``bdi-rl run``'s path (embedded
XMPP server, telemetry, trace at ``episode`` level), in its own mode (FrozenLake 4x4: step
mode, every env step a plan iteration; 8x8 and Taxi: episode mode) and, with ``--both-modes``,
in the other mode as well.

After every training episode the greedy policy is judged exactly on the env's transition table
(``bench/exact_eval.py``): FrozenLake 4x4 success >= 0.70 (the best stationary policy scores
0.74), 8x8 >= 0.85, Taxi mean return >= 7.5. Each learner stops once solved (or at the
spec's episode budget). Reported: median episodes to solved over the seeds, and BDI / plain.

    python bench/bench_sample_efficiency.py --seeds 1 2 3 4 5

Target (roadmap, issue 6): within 10 % of the plain loop.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import gymnasium as gym
import msgspec
import numpy as np
from exact_eval import TransitionModel

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bdi_rl.spec import ExperimentSpec, load_spec  # noqa: E402

ENVS = {  # spec file, judged quantity (index into greedy_value), threshold
    "frozenlake-4x4": ("frozenlake-4x4.toml", 1, 0.70),
    "frozenlake-8x8": ("frozenlake-8x8.toml", 1, 0.85),
    "taxi": ("taxi.toml", 0, 7.5),
}


def _model(spec: ExperimentSpec) -> TransitionModel:
    env = gym.make(spec.env.id, **spec.env.kwargs)
    return TransitionModel(env.unwrapped, spec.env.max_episode_steps or 200)


def plain_loop(spec: ExperimentSpec, seed: int, solved: Any) -> int | None:
    """Episodes until ``solved(q)``, or None within the spec's budget."""
    cfg = spec.learning
    env = gym.make(spec.env.id, max_episode_steps=spec.env.max_episode_steps, **spec.env.kwargs)
    n_actions = int(env.action_space.n)
    q = np.full((int(env.observation_space.n), n_actions), cfg.q_init)
    rng = random.Random(seed)
    env.reset(seed=seed)
    for episode in range(spec.episodes):
        eps = (
            cfg.epsilon_end
            if episode >= cfg.epsilon_decay_episodes
            else cfg.epsilon_start + (cfg.epsilon_end - cfg.epsilon_start) * episode / cfg.epsilon_decay_episodes
        )
        alpha = cfg.alpha if cfg.alpha_min is None else max(cfg.alpha_min, cfg.alpha * cfg.alpha_decay**episode)
        s, _ = env.reset()
        done = False
        while not done:
            if rng.random() < eps:
                a = rng.randrange(n_actions)
            else:
                row = q[s]
                a = rng.choice(np.flatnonzero(row == row.max()).tolist())
            s2, r, term, trunc, _ = env.step(a)
            target = r if term else r + cfg.gamma * q[s2].max()
            q[s, a] += alpha * (target - q[s, a])
            s, done = s2, term or trunc
        if solved(q):
            return episode + 1
    return None


class Judge:
    """Stops a BDI learner at the first episode after which its greedy policy is solved."""

    def __init__(self, solved: Any) -> None:
        self.solved = solved
        self.at: int | None = None

    def __call__(self, session: Any) -> None:
        if self.at is None and self.solved(session.learner.q):
            self.at = session.learner.episodes
            session.episodes_target = session.learner.episodes


def bdi_learner(spec: ExperimentSpec, seed: int, mode: str, solved: Any) -> int | None:
    from spade.container import Container

    from bdi_rl.xmpp.runner import run_experiment

    spec = msgspec.structs.replace(spec, seed=seed, eval_episodes=1, trace="episode", checkpoint_every=0)
    spec.agents = [msgspec.structs.replace(g, mode=mode) for g in spec.agents]
    judge = Judge(solved)
    with tempfile.TemporaryDirectory() as runs:
        result = Container().loop.run_until_complete(run_experiment(spec, Path(runs), on_episode=judge))
    if result.failures:
        raise SystemExit(f"bench run failed: {result.failures}")
    return judge.at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--env", action="append", choices=sorted(ENVS), help="default: all")
    parser.add_argument("--both-modes", action="store_true", help="run the BDI learner in both modes")
    args = parser.parse_args()
    from bdi_rl.cli import prepare_agent_process

    prepare_agent_process()
    for name in args.env or list(ENVS):
        spec_file, which, threshold = ENVS[name]
        spec = load_spec(ROOT / "agents" / spec_file)
        model = _model(spec)

        def solved(q: np.ndarray, model=model, which=which, threshold=threshold) -> bool:
            return model.greedy_value(q)[which] >= threshold

        own = spec.agents[0].mode
        modes = [own, "episode" if own == "step" else "step"] if args.both_modes else [own]
        plain = [plain_loop(spec, seed, solved) for seed in args.seeds]
        print(f"{name}: plain loop {plain}", flush=True)
        for mode in modes:
            bdi = [bdi_learner(spec, seed, mode, solved) for seed in args.seeds]
            ratio = _median(bdi) / _median(plain)
            print(
                f"{name}: BDI {mode} mode {bdi}; median {_median(bdi):g} vs {_median(plain):g}: {ratio:.3f}x",
                flush=True,
            )


def _median(values: list[int | None]) -> float:
    """Median episodes to solved; an unsolved seed counts as infinite."""
    return statistics.median(float("inf") if v is None else v for v in values)


if __name__ == "__main__":
    main()
