"""Team vs independent learners on FrozenLake 8x8: env steps until every learner is solved.

Runs the real agents (embedded XMPP server, telemetry, trace at ``episode`` level) for
each seed:

- ``independent``: 4 learners with ``asl/learner.asl`` and the tuned single-learner config
  of ``agents/frozenlake-8x8.toml``; they never talk;
- ``team``: ``agents/frozenlake-team.toml`` as shipped (a coordinator and 4 learners with
  ``asl/team-learner.asl``: hazards, goals and experience shared over XMPP);
- ``independent, team schedule``: 4 silent learners with the team's faster schedule, so the
  gain is not the schedule's;
- ``team, tells only``: the team with ``share_every(0)`` and the single-learner schedule:
  hazards and goals are told (Q priors), experience is not, so the two kinds of sharing
  are measured apart.

"Solved" is judged exactly, not by sampling: after every 10th episode of a learner its greedy
policy is evaluated on the env's transition table under the 200-step limit
(``bench/exact_eval.py``); success >= 0.85 counts. The figure is the total of all learners'
training env steps at the first moment every learner is solved at once (then training
stops). Evaluation itself takes no env steps.

    python bench/bench_team.py --seeds 1 2 3 4 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import msgspec
from exact_eval import TransitionModel

from bdi_rl.cli import prepare_agent_process
from bdi_rl.spec import AgentGroup, ExperimentSpec, load_spec

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ("independent", "team", "independent, team schedule", "team, tells only")
SOLVED = 0.85
CHECK_EVERY = 10
LEARNERS = 4


def _independent(spec_8x8: ExperimentSpec, learning: Any) -> ExperimentSpec:
    spec = msgspec.structs.replace(
        spec_8x8, name="bench-independent", learning=learning, eval_episodes=1, trace="episode"
    )
    spec.agents = [AgentGroup(name="learner", count=LEARNERS, asl=str(ROOT / "asl" / "learner.asl"), mode="episode")]
    return spec


def variants() -> dict[str, ExperimentSpec]:
    single = load_spec(ROOT / "agents" / "frozenlake-8x8.toml")
    team = load_spec(ROOT / "agents" / "frozenlake-team.toml")
    team = msgspec.structs.replace(team, eval_episodes=1, trace="episode", episodes=single.episodes)
    assert sum(g.count for g in team.agents if g.role == "learner") == LEARNERS
    return {
        "independent": _independent(single, single.learning),
        "team": team,
        "independent, team schedule": _independent(single, team.learning),
        "team, tells only": _tells_only(team, single.learning),
    }


def _tells_only(team: ExperimentSpec, learning: Any) -> ExperimentSpec:
    spec = msgspec.structs.replace(team, name="bench-tells-only", learning=learning)
    spec.agents = [
        msgspec.structs.replace(g, beliefs=["share_every(0)"]) if g.role == "learner" else g for g in team.agents
    ]
    return spec


class SolvedJudge:
    """Watches every learner's episodes; stops training once all are solved at once."""

    def __init__(self, model: TransitionModel) -> None:
        self.model = model
        self.sessions: dict[int, Any] = {}
        self.solved: dict[int, bool] = {}
        self.steps_when_solved: int | None = None
        self.episodes_when_solved: list[int] = []

    def __call__(self, session: Any) -> None:
        key = id(session)
        self.sessions[key] = session
        if self.steps_when_solved is not None or session.learner.episodes % CHECK_EVERY:
            return
        self.solved[key] = self.model.greedy_value(session.learner.q)[1] >= SOLVED
        if len(self.solved) == LEARNERS and all(self.solved.values()):
            self.steps_when_solved = sum(b.learner.env_steps for b in self.sessions.values())
            self.episodes_when_solved = sorted(b.learner.episodes for b in self.sessions.values())
            for b in self.sessions.values():  # done: end training at the next episode
                b.episodes_target = min(b.episodes_target, b.learner.episodes + 1)


def measure(spec: ExperimentSpec, seed: int, model: TransitionModel) -> tuple[int | None, list[int]]:
    from spade.container import Container

    from bdi_rl.xmpp.runner import run_experiment

    spec = msgspec.structs.replace(spec, seed=seed)
    judge = SolvedJudge(model)
    with tempfile.TemporaryDirectory() as runs:
        result = Container().loop.run_until_complete(run_experiment(spec, Path(runs), on_episode=judge))
    if result.failures:
        raise SystemExit(f"bench run failed: {result.failures}")
    return judge.steps_when_solved, judge.episodes_when_solved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument(
        "--only", action="append", metavar="VARIANT", help="run only this variant (repeatable): " + ", ".join(VARIANTS)
    )
    args = parser.parse_args()
    prepare_agent_process()
    import gymnasium as gym

    model = TransitionModel(gym.make("FrozenLake-v1", map_name="8x8").unwrapped, horizon=200)
    unknown = set(args.only or ()) - set(VARIANTS)
    if unknown:
        parser.error(f"--only: unknown variant {sorted(unknown)[0]!r} (known: {', '.join(VARIANTS)})")
    specs = {k: v for k, v in variants().items() if not args.only or k in args.only}
    steps: dict[str, list[int | None]] = {name: [] for name in specs}
    print(f"{'variant':28} {'seed':>4} {'env steps to all solved':>24}  episodes per learner")
    for seed in args.seeds:  # interleaved, so drift in machine load hits every variant
        for name, spec in specs.items():
            total, episodes = measure(spec, seed, model)
            steps[name].append(total)
            shown = f"{total:,}" if total is not None else "not solved"
            print(f"{name:28} {seed:>4} {shown:>24}  {episodes}", flush=True)
    print()
    base = steps.get("independent")
    for name, values in steps.items():
        solved = [v for v in values if v is not None]
        line = f"{name:28} solved {len(solved)}/{len(values)}"
        if solved:
            line += f", median {statistics.median(solved):,.0f} env steps"
        if base and name != "independent" and all(v is not None for v in values + base):
            ratios = [v / b for v, b in zip(values, base, strict=False)]
            line += (
                f", x independent: median {statistics.median(ratios):.3f} "
                f"(per seed {', '.join(f'{r:.2f}' for r in ratios)})"
            )
        print(line)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
