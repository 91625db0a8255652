"""Warm start vs cold start: training episodes until the greedy policy is solved.

For each env and seed, with the real agents (embedded XMPP server, telemetry, trace at
``episode`` level) and the shipped spec's hyper-parameters:

1. **cold**: a fresh learner trains with the shipped spec; we note the first episode after
   which its greedy policy is solved, and let it finish its schedule (12,000 episodes for
   FrozenLake 8x8, 6,000 for Taxi), as a user's finished run does. Its final checkpoint is
   the solved table a user would warm-start from (checked: it is solved);
2. **warm**: a new run (another seed: other episodes, same env) warm-started from that run
   (``warm_start`` = the cold run's directory, as ``--warm-start`` does) trains until its
   greedy policy is solved.

A table that stops at the first episode it crosses the threshold sits right at it, and one
more update can take it below; that is why the source is a finished run, not the first
solved table.

"Solved" is judged exactly after every training episode, on the env's transition table
(``bench/exact_eval.py``, no sampling noise, no extra env steps): FrozenLake 8x8 success
probability >= 0.85 within 200 steps; Taxi expected return >= 7.5 within 200 steps (the
optimum is ~7.9). Target (roadmap): warm <= 0.1x cold.

    python bench/bench_warm_start.py --seeds 1 2 3
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path
from typing import Any

import msgspec
from exact_eval import TransitionModel

from bdi_rl.cli import prepare_agent_process
from bdi_rl.spec import ExperimentSpec, load_spec

ROOT = Path(__file__).resolve().parent.parent
ENVS = {  # spec, what "solved" means: (index into greedy_value's result, threshold)
    "frozenlake-8x8": ("frozenlake-8x8.toml", 1, 0.85),
    "taxi": ("taxi.toml", 0, 7.5),
}


class Judge:
    """Notes the first episode after which the greedy policy is solved (``stop``: and ends
    training there)."""

    def __init__(self, model: TransitionModel, which: int, threshold: float, stop: bool) -> None:
        self.model, self.which, self.threshold, self.stop = model, which, threshold, stop
        self.solved_at: int | None = None

    def solved(self, q: Any) -> bool:
        return self.model.greedy_value(q)[self.which] >= self.threshold

    def __call__(self, session: Any) -> None:
        if self.solved_at is None and self.solved(session.learner.q):
            self.solved_at = session.learner.episodes
            if self.stop:
                session.episodes_target = session.learner.episodes  # done: stop training now


def _run(spec: ExperimentSpec, runs: Path, judge: Judge) -> Path:
    from spade.container import Container

    from bdi_rl.xmpp.runner import run_experiment

    result = Container().loop.run_until_complete(run_experiment(spec, runs, on_episode=judge))
    if result.failures:
        raise SystemExit(f"bench run failed: {result.failures}")
    return result.run_dir


def measure(name: str, seed: int, model: TransitionModel) -> tuple[int | None, int | None]:
    """(cold episodes to solved, warm episodes to solved) for one seed."""
    from bdi_rl.rl.checkpoint import load_checkpoint

    spec_file, which, threshold = ENVS[name]
    spec = load_spec(ROOT / "agents" / spec_file)
    spec = msgspec.structs.replace(spec, seed=seed, eval_episodes=1, trace="episode")
    with tempfile.TemporaryDirectory() as tmp:
        cold = Judge(model, which, threshold, stop=False)
        cold_dir = _run(spec, Path(tmp) / "cold", cold)
        if cold.solved_at is None:
            return None, None
        table = load_checkpoint(cold_dir / "qtables" / "learner.npz").q
        assert cold.solved(table), "the cold run's final table is not solved"
        warm_spec = msgspec.structs.replace(spec, seed=seed + 1000)
        warm_spec.agents = [msgspec.structs.replace(g, warm_start=str(cold_dir)) for g in spec.agents]
        warm = Judge(model, which, threshold, stop=True)
        _run(warm_spec, Path(tmp) / "warm", warm)
    return cold.solved_at, warm.solved_at


def moved_goal(seed: int) -> tuple[int | None, int | None, float]:
    """FrozenLake 8x8 without ice (moves do what they say), goal moved from (7,7) to (7,0):
    (cold episodes to solved on the new goal, warm episodes to solved when warm-started from
    a finished run on the old goal, the warm table's success on the new goal before training)."""
    import gymnasium as gym

    from bdi_rl.rl.checkpoint import load_checkpoint
    from bdi_rl.rl.goals import base_desc, goal_desc

    base = msgspec.structs.replace(
        load_spec(ROOT / "agents" / "frozenlake-8x8.toml"), seed=seed, eval_episodes=1, trace="episode"
    )
    base.env = msgspec.structs.replace(base.env, kwargs={"map_name": "8x8", "is_slippery": False})
    moved_env = msgspec.structs.replace(base.env, goals=[[7, 0]])
    new_map = goal_desc(base_desc("FrozenLake-v1", {"map_name": "8x8"}), (7, 0), "goal")
    model = TransitionModel(gym.make("FrozenLake-v1", desc=new_map, is_slippery=False).unwrapped, 200)
    old_model = TransitionModel(gym.make("FrozenLake-v1", map_name="8x8", is_slippery=False).unwrapped, 200)
    with tempfile.TemporaryDirectory() as tmp:
        cold = Judge(model, 1, 0.99, stop=True)
        _run(msgspec.structs.replace(base, env=moved_env), Path(tmp) / "cold", cold)
        source = _run(base, Path(tmp) / "source", Judge(old_model, 1, 0.99, stop=False))
        table = load_checkpoint(source / "qtables" / "learner.npz").q
        before = model.greedy_value(table)[1]
        warm_spec = msgspec.structs.replace(base, env=moved_env, seed=seed + 1000)
        warm_spec.agents = [msgspec.structs.replace(g, warm_start=str(source)) for g in base.agents]
        warm = Judge(model, 1, 0.99, stop=True)
        _run(warm_spec, Path(tmp) / "warm", warm)
    return cold.solved_at, warm.solved_at, before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--env", action="append", choices=sorted(ENVS), help="default: both")
    parser.add_argument(
        "--moved-goal", action="store_true", help="instead: FrozenLake 8x8 without ice, goal moved (7,7) -> (7,0)"
    )
    args = parser.parse_args()
    if args.moved_goal:
        prepare_agent_process()
        print(f"{'seed':>4} {'cold episodes':>14} {'warm episodes':>14} {'warm / cold':>12}  warm table at start")
        for seed in args.seeds:
            cold, warm, before = moved_goal(seed)
            ratio = f"{warm / cold:.3f}" if cold and warm is not None else "-"
            print(f"{seed:>4} {cold!s:>14} {warm!s:>14} {ratio:>12}  success {before:.2f}", flush=True)
        return
    prepare_agent_process()
    import gymnasium as gym

    models = {
        "frozenlake-8x8": TransitionModel(gym.make("FrozenLake-v1", map_name="8x8").unwrapped, 200),
        "taxi": TransitionModel(gym.make("Taxi-v4").unwrapped, 200),
    }
    print(f"{'env':16} {'seed':>4} {'cold episodes':>14} {'warm episodes':>14} {'warm / cold':>12}")
    for name in args.env or sorted(ENVS):
        ratios = []
        for seed in args.seeds:
            cold, warm = measure(name, seed, models[name])
            ratio = warm / cold if cold and warm is not None else None
            if ratio is not None:
                ratios.append(ratio)
            print(
                f"{name:16} {seed:>4} {cold if cold is not None else 'unsolved':>14} "
                f"{warm if warm is not None else 'unsolved':>14} "
                f"{f'{ratio:.4f}' if ratio is not None else '-':>12}",
                flush=True,
            )
        if ratios:
            print(
                f"{name:16} median warm / cold {statistics.median(ratios):.4f} "
                f"(max {max(ratios):.4f}) over {len(ratios)} seeds\n",
                flush=True,
            )


if __name__ == "__main__":
    main()
