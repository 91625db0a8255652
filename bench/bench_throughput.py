"""Env steps/s of the BDI learner (step and episode mode) against a plain Python Q-learning loop.

Everything runs in one process, one after another, on the same env and episode budget, and
the figures are reported as ratios to the plain loop measured in the same run (the machine
is shared and noisy: compare ratios, not absolute numbers). Each configuration is repeated
``--repeat`` times; the median is reported.

    python bench/bench_throughput.py --env FrozenLake-v1 --episodes 2000 --repeat 3

"Tracing off" is the ``episode`` trace level (one event per episode); "on" is ``step``
(every belief change, goal, intention, action and Q-update, kept in ``steps`` records:
README, "The trace"). The learners run the fast reasoning cycle (their default); the two
"Jason's cycle" rows run Jason's (``[[agents]] cycle = "jason"``), tracing off.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from tune_defaults import plain_loop  # the reference loop, shared with the tuning script

from bdi_rl.cli import prepare_agent_process
from bdi_rl.rl.qlearning import LearningConfig
from bdi_rl.spec import AgentGroup, EnvSpec, ExperimentSpec, _validate

ENV_KWARGS = {
    "FrozenLake-v1": {"map_name": "4x4", "is_slippery": True},
    "Taxi-v4": {},
    "CliffWalking-v1": {},
}


def bdi_run(
    env_id: str, episodes: int, config: LearningConfig, seed: int, mode: str, trace: str, cycle: str | None = None
) -> float:
    """One learner through the real runner (embedded XMPP server, telemetry, trace file);
    ``cycle``: its mind's reasoning cycle (None: the learners' default, the fast one)."""
    from spade.container import Container

    from bdi_rl.xmpp.runner import run_experiment

    spec = ExperimentSpec(
        name=f"bench-{mode}-{trace}",
        env=EnvSpec(id=env_id, kwargs=ENV_KWARGS.get(env_id, {})),
        agents=[AgentGroup(name="learner", mode=mode, cycle=cycle)],
        episodes=episodes,
        seed=seed,
        trace=trace,
        eval_episodes=1,
        learning=config,
    )
    spec.agents[0].asl = str(Path(__file__).resolve().parent.parent / "asl" / "learner.asl")
    _validate(spec)
    with tempfile.TemporaryDirectory() as runs:
        result = Container().loop.run_until_complete(run_experiment(spec, Path(runs)))
    if result.failures:
        raise SystemExit(f"bench run failed: {result.failures}")
    return float(result.summary["env_steps_per_second"])


def _rate(steps: int, seconds: float) -> float:
    return steps / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="FrozenLake-v1", choices=sorted(ENV_KWARGS))
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    prepare_agent_process()
    config = LearningConfig(epsilon_decay_episodes=max(1, int(args.episodes * 0.75)))

    configs = {
        "plain loop": lambda: _rate(
            *plain_loop(args.env, ENV_KWARGS.get(args.env, {}), None, args.episodes, config.gamma, args.seed)
        ),
        "episode mode, trace episode": lambda: bdi_run(
            args.env, args.episodes, config, args.seed, "episode", "episode"
        ),
        "episode mode, trace step": lambda: bdi_run(args.env, args.episodes, config, args.seed, "episode", "step"),
        "step mode, trace episode": lambda: bdi_run(args.env, args.episodes, config, args.seed, "step", "episode"),
        "step mode, trace step": lambda: bdi_run(args.env, args.episodes, config, args.seed, "step", "step"),
        "step mode, Jason's cycle": lambda: bdi_run(
            args.env, args.episodes, config, args.seed, "step", "episode", "jason"
        ),
        "episode mode, Jason's cycle": lambda: bdi_run(
            args.env, args.episodes, config, args.seed, "episode", "episode", "jason"
        ),
    }
    samples: dict[str, list[float]] = {name: [] for name in configs}
    for _ in range(args.repeat):  # interleaved, so drift in machine load hits every config
        for name, fn in configs.items():
            samples[name].append(fn())
    median = {name: statistics.median(values) for name, values in samples.items()}
    plain = median["plain loop"]
    print(f"env {args.env}, {args.episodes} episodes, median of {args.repeat}")
    print(f"{'configuration':32} {'steps/s':>10} {'x plain':>8}")
    for name, value in median.items():
        print(f"{name:32} {value:10.0f} {value / plain:8.3f}")
    for mode in ("episode", "step"):
        on, off = median[f"{mode} mode, trace step"], median[f"{mode} mode, trace episode"]
        print(f"{mode} mode: step-level tracing on / off = {on / off:.3f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
