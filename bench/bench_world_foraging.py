"""Level-based foraging (5x5, 2 players, 1 food, cooperative): episodes until the greedy team
return reaches 0.9, BDI team vs independent learners.

Each seed runs the real agents (embedded XMPP server, telemetry, the world agent, trace at
``episode`` level) of ``agents/foraging.toml``:

- ``bdi team``: the spec as shipped, ``asl/forager.asl``: the plans keep the task's one
  convention (load when both players are next to the food, wait there for the partner) and
  the hysteretic learners learn the rest;
- ``independent``: the same spec, learners and schedule with ``asl/learner.asl``: every move
  is the learner's own epsilon-greedy choice.

Every ``eval_every`` episodes (500) the world plays 100 greedy joint episodes (the same
starts each time) with the agents' Q-tables alone; the figure is the first evaluation point
whose team return (the two agents' mean returns added: 1.0 is always eating the food) is at
least 0.9. A seed that does not get there within ``--budget`` episodes counts as the budget
(censored, marked ">"). Seeds run A B A B, in ``--workers`` processes.

    python bench/bench_world_foraging.py --seeds 10 --budget 30000 --workers 2
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # spawned workers import bdi_rl from this checkout too
VARIANTS = {"bdi team": "forager.asl", "independent": "learner.asl"}
TARGET = 0.9  # --target


class Judge:
    """Ends training at the first evaluation whose team return reaches the target."""

    def __init__(self, target: float) -> None:
        self.target = target
        self.sessions: dict[int, Any] = {}
        self.reached: int | None = None
        self.curve: dict[int, float] = {}
        """greedy team return at each evaluation during training, by episodes done"""

    def __call__(self, session: Any) -> None:
        self.sessions[id(session)] = session
        evals = [s.stats.eval for s in self.sessions.values()]
        if len(evals) == 2 and all(e is not None for e in evals):
            point = min(s.learner.episodes for s in self.sessions.values()) // 500 * 500
            self.curve.setdefault(point, sum(e.mean_return for e in evals))  # type: ignore[union-attr]
        if self.reached is None and len(evals) == 2 and all(e is not None for e in evals):
            if sum(e.mean_return for e in evals) >= self.target:  # type: ignore[union-attr]
                self.reached = min(s.learner.episodes for s in self.sessions.values()) // 500 * 500
                last = max(s.learner.episodes for s in self.sessions.values()) + 1
                for s in self.sessions.values():
                    s.episodes_target = min(s.episodes_target, last)


def run_seed(job: tuple[str, int, int, float]) -> tuple[str, int, int | None, float, float, dict[int, float]]:
    """(variant, seed, episodes to the target or None, final team return, wall seconds,
    greedy team return by episodes)."""
    variant, seed, budget, target = job
    from spade.container import Container

    from bdi_rl.spec import load_spec
    from bdi_rl.xmpp.runner import run_experiment

    spec = load_spec(ROOT / "agents" / "foraging.toml")
    spec = msgspec.structs.replace(spec, seed=seed, trace="episode", episodes=budget, name=f"lbf-{variant[:3]}")
    for group in spec.agents:
        group.asl = str(ROOT / "asl" / VARIANTS[variant])
    from spade.agent import AuthenticationFailure

    for attempt in (1, 2):  # the embedded server failed to start or to log an agent in, rarely
        judge = Judge(target)
        started = time.perf_counter()
        try:
            with tempfile.TemporaryDirectory() as runs:
                result = Container().loop.run_until_complete(run_experiment(spec, Path(runs), on_episode=judge))
            break
        except (AuthenticationFailure, AttributeError) as exc:
            if attempt == 2 or judge.sessions:  # only before any episode: a start-up failure
                raise
            print(f"{variant} seed {seed}: the run did not start ({exc!r}); running it again", file=sys.stderr)
    if result.failures:
        raise SystemExit(f"{variant} seed {seed}: {result.failures}")
    team = sum(a["eval"]["mean_return"] for a in result.summary["agents"].values() if "eval" in a)
    if judge.reached is None and team >= target:  # the final evaluation, at the budget
        judge.reached = budget
    judge.curve[budget] = team
    return variant, seed, judge.reached, team, time.perf_counter() - started, judge.curve


def _init() -> None:
    from bdi_rl.cli import prepare_agent_process

    prepare_agent_process()


def iqm(values: list[float]) -> float:
    """The interquartile mean: the mean of the middle half (rliable's IQM)."""
    from scipy.stats import trim_mean

    return float(trim_mean(np.asarray(values, dtype=float), 0.25))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 (default 10)")
    parser.add_argument("--budget", type=int, default=30000, help="most training episodes per run")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--target", type=float, default=TARGET, help="greedy team return to reach")
    args = parser.parse_args()
    jobs = [(variant, seed, args.budget, args.target) for seed in range(args.seeds) for variant in VARIANTS]
    results: dict[str, list[tuple[int, int | None, float, float]]] = {v: [] for v in VARIANTS}
    curves: dict[str, list[dict[int, float]]] = {v: [] for v in VARIANTS}
    with multiprocessing.get_context("spawn").Pool(args.workers, initializer=_init, maxtasksperchild=1) as pool:
        for variant, seed, reached, team, wall, curve in pool.imap_unordered(run_seed, jobs):
            results[variant].append((seed, reached, team, wall))
            curves[variant].append(curve)
            shown = reached if reached is not None else f">{args.budget}"
            print(
                f"{variant:12} seed {seed:3}: {shown} episodes (team return {team:.2f}, {wall:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
    print(f"| plans | seeds at {args.target:g} | episodes to {args.target:g}: median | IQM | per seed | s per run |")
    print("|---|---:|---:|---:|---|---:|")
    for variant, rows in results.items():
        rows.sort()
        episodes = [r[1] if r[1] is not None else args.budget for r in rows]
        censored = sum(r[1] is None for r in rows)
        per_seed = ", ".join(str(r[1]) if r[1] is not None else f">{args.budget}" for r in rows)
        mark = ">" if censored * 2 >= len(rows) else ""
        print(
            f"| {variant} | {len(rows) - censored}/{len(rows)} | {mark}{statistics.median(episodes):.0f} | "
            f"{'>' if censored else ''}{iqm(episodes):.0f} | {per_seed} | "
            f"{statistics.mean(r[3] for r in rows):.0f} |"
        )

    points = [p for p in (2000, 5000, 10000, 15000, 20000, 25000, 30000) if p <= args.budget]
    print()
    print("| plans | " + " | ".join(f"team return at {p}: median" for p in points) + " |")
    print("|---|" + "---:|" * len(points))
    for variant, runs in curves.items():
        cells = []
        for p in points:
            values = [c[p] for c in runs if p in c]  # a run that reached the target stopped there
            stopped = len(runs) - len(values)
            cells.append(
                f"{statistics.median(values):.2f}" + (f" ({stopped} stopped)" if stopped else "") if values else "-"
            )
        print(f"| {variant} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
