"""A sweep's results grouped by configuration (issue 30): every setting but the seed makes a
group; per group, the final evaluation over its seeds and how fast they learned.

Per run, the metric (evaluation success, or mean return) is its learners' final evaluation
averaged (``summary.json``, else the trace's last evaluation). Per group:

- the interquartile mean with its 95 % percentile-bootstrap interval (``curves.iqm_ci``, as
  the compare page computes it) once there are :data:`IQM_MIN_RUNS` runs (with fewer, the
  IQM trims nothing and is the mean: it is not shown as one), the mean, the standard
  deviation and the range;
- the fraction of its runs that reached ``threshold`` during training, and the episodes (and
  env steps) they needed: their first evaluation during training that reached it (a run that
  evaluates during training, ``eval_every``), else the first episode at which the trailing
  mean of ``window`` training episodes did. A run that never did is censored at the episodes
  it ran, and counted as such, never as a success.

Runs that failed, were cancelled or have not written a summary yet are counted per group and
left out of the numbers.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bdi_rl.readers.curves import iqm, iqm_ci, run_series, smooth
from bdi_rl.readers.indexcache import open_index
from bdi_rl.store import SWEEPS_DIR, Sweep, read_sweep

#: Fewest runs for an IQM: with 3, a 25 % trim cuts nothing and the IQM is the plain mean.
IQM_MIN_RUNS = 4
METRICS = ("success", "return")
CSV_COLUMNS = (
    "configuration",
    *("runs", "finished", "failed", "iqm", "iqm_ci_low", "iqm_ci_high", "mean", "std", "min", "max"),
    *("reached", "episodes_to_threshold_median", "env_steps_to_threshold_median", "censored"),
)


class SweepReportError(ValueError):
    """No such sweep, or nothing in it to report: the message is meant for the user."""


@dataclass
class RunResult:
    run: str
    final: float
    reached_at: tuple[int, float] | None
    """(episodes, env steps) when it reached the threshold; None: it did not"""
    episodes: int


@dataclass
class Group:
    label: str
    settings: dict[str, Any]
    runs: int = 0
    failed: int = 0
    results: list[RunResult] = field(default_factory=list)

    def row(self, threshold: float) -> dict[str, Any]:
        finals = np.array([r.final for r in self.results], dtype=np.float64)
        reached = [r for r in self.results if r.reached_at is not None]
        row: dict[str, Any] = {
            "configuration": self.label,
            "runs": self.runs,
            "finished": len(self.results),
            "failed": self.failed,
            "iqm": None,
            "iqm_ci_low": None,
            "iqm_ci_high": None,
            "mean": float(finals.mean()) if len(finals) else None,
            "std": float(finals.std(ddof=1)) if len(finals) > 1 else None,
            "min": float(finals.min()) if len(finals) else None,
            "max": float(finals.max()) if len(finals) else None,
            "reached": f"{len(reached)}/{len(self.results)}",
            "episodes_to_threshold_median": _median([r.reached_at[0] for r in reached if r.reached_at]),
            "env_steps_to_threshold_median": _median([r.reached_at[1] for r in reached if r.reached_at]),
            "censored": ", ".join(f"{r.run} at {r.episodes}" for r in self.results if r.reached_at is None),
        }
        if len(finals) >= IQM_MIN_RUNS:
            low, high = iqm_ci(finals)
            row["iqm"], row["iqm_ci_low"], row["iqm_ci_high"] = float(iqm(finals)), float(low[0]), float(high[0])
        return row


def _median(values: list[float] | list[int]) -> float | None:
    return float(np.median(values)) if values else None


def find_sweep(what: str, runs: Path) -> tuple[Sweep, Path]:
    """A sweep by id (in ``runs``) or by its record's path; (sweep, runs directory)."""
    path = Path(what)
    if path.suffix == ".json" and path.is_file():
        sweep = read_sweep(path.parent.parent, path.stem)
        if sweep is None:
            raise SweepReportError(f"{path}: not a sweep record")
        return sweep, path.parent.parent
    sweep = read_sweep(runs, what)
    if sweep is None:
        raise SweepReportError(f"{what}: no such sweep in {runs / SWEEPS_DIR} (an id: sweep-YYYYmmdd-HHMMSS)")
    return sweep, runs


def configuration_label(settings: dict[str, Any]) -> str:
    """``learning.alpha=0.1, agents.learner.asl=mine.asl``: how a configuration is named."""
    if not settings:
        return "(the spec)"
    return ", ".join(f"{path}={_shown(value)}" for path, value in settings.items())


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, str) and "/" in value:
        return Path(value).name
    return json.dumps(value) if isinstance(value, (dict, list)) else str(value)


def _final(run_dir: Path, metric: str) -> float | None:
    """The run's learners' final evaluation, averaged (None: no summary with one)."""
    try:
        summary = json.loads((run_dir / "summary.json").read_text())
    except (OSError, ValueError):
        return None
    key = "success_rate" if metric == "success" else "mean_return"
    values = [
        float(agent["eval"][key])
        for agent in summary.get("agents", {}).values()
        if isinstance(agent, dict) and isinstance(agent.get("eval"), dict) and agent["eval"].get(key) is not None
    ]
    return sum(values) / len(values) if values else None


def _reached(run_dir: Path, metric: str, threshold: float, window: int) -> tuple[tuple[int, float] | None, int]:
    """When the run's learners (averaged) first reached ``threshold`` in training, as (episodes,
    env steps), and the episodes it ran: at its first evaluation during training that did, when
    it evaluates during training (``eval_every``), else at the first episode where the trailing
    mean of ``window`` training episodes did (a full window: one lucky first episode is not
    learning)."""
    series = run_series(open_index(run_dir, None))
    agents = series.agents
    length = min((len(a.train[metric]) for a in agents), default=0)
    if length == 0:
        return None, 0
    steps = np.mean([a.episode_x["env_steps"][:length] for a in agents], axis=0)
    # this run's own episodes (a warm-started learner's curves go on from its table's)
    own = [a.eval_x["episodes"] - (a.episode_x["episodes"][0] - 1) for a in agents]
    points = [set(after[after < length].tolist()) for after in own]
    common = sorted(set.intersection(*points)) if points else []
    if common:
        for at in common:
            values = [float(a.evals[metric][after == at][-1]) for a, after in zip(agents, own, strict=True)]
            if at > 0 and sum(values) / len(values) >= threshold:
                return (int(at), float(steps[int(at) - 1])), length
        return None, length
    trailing = np.mean([smooth(a.train[metric][:length], window) for a in agents], axis=0)
    full = np.arange(length) >= min(window, length) - 1
    hits = np.nonzero((trailing >= threshold) & full)[0]
    return ((int(hits[0]) + 1, float(steps[hits[0]])) if len(hits) else None), length


def report(
    what: str,
    runs: Path,
    metric: str = "success",
    threshold: float = 0.7,
    window: int = 100,
    allow_empty: bool = False,
) -> tuple[Sweep, list[dict[str, Any]]]:
    """The sweep's groups as rows (:data:`CSV_COLUMNS`), best IQM (else mean) first; with
    none of its runs finished, SweepReportError unless ``allow_empty`` (the page, following a
    sweep that has just started)."""
    if metric not in METRICS:
        raise SweepReportError(f"--metric {metric!r}: one of {', '.join(METRICS)}")
    if window < 1 or not math.isfinite(threshold):
        raise SweepReportError("--window is at least 1 and --threshold a number")
    sweep, runs_dir = find_sweep(what, runs)
    configurations = sweep.configurations or [{}]
    groups = [Group(configuration_label(settings), settings) for settings in configurations]
    for k, run in enumerate(sweep.runs):
        index = sweep.configuration[k] if k < len(sweep.configuration) else 0
        group = groups[index if 0 <= index < len(groups) else 0]
        group.runs += 1
        if k in sweep.failed:
            group.failed += 1
        if run is None or k in sweep.failed:
            continue
        run_dir = runs_dir / run
        final = _final(run_dir, metric)
        if final is None:
            continue
        reached_at, episodes = _reached(run_dir, metric, threshold, window)
        group.results.append(RunResult(run, final, reached_at, episodes))
    rows = [group.row(threshold) for group in groups]
    rows.sort(key=_rank)
    if not any(r["finished"] for r in rows) and not allow_empty:
        raise SweepReportError(f"{sweep.id}: no run of it has finished yet: nothing to report")
    return sweep, rows


def _rank(row: dict[str, Any]) -> float:
    """Best first: by IQM, else mean; groups without a finished run last."""
    value = row["iqm"] if row["iqm"] is not None else row["mean"]
    return -float(value) if value is not None else math.inf


def table_text(sweep: Sweep, rows: list[dict[str, Any]], metric: str, threshold: float, window: int) -> str:
    """The rows as a plain-text table, with what each column means."""

    def number(value: Any, digits: int = 3) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    lines = [
        f"{sweep.id} ({sweep.spec}): final evaluation {metric} per configuration, over its seeds",
        f"IQM with its 95 % bootstrap CI from {IQM_MIN_RUNS} runs; reached: runs whose training {metric} "
        f"(trailing mean of {window} episodes, or an evaluation) reached {threshold:g}; censored runs never did",
        "",
    ]
    header = [
        "configuration",
        "runs",
        "IQM [95 % CI]",
        "mean ± std",
        "min-max",
        "reached",
        "episodes to it",
        "steps to it",
    ]
    body = []
    for r in rows:
        iqm_text = "-" if r["iqm"] is None else f"{r['iqm']:.3f} [{r['iqm_ci_low']:.3f}, {r['iqm_ci_high']:.3f}]"
        spread = f"{number(r['mean'])} ± {number(r['std'])}"
        runs = f"{r['finished']}/{r['runs']}" + (f" ({r['failed']} failed)" if r["failed"] else "")
        body.append([
            r["configuration"], runs, iqm_text, spread, f"{number(r['min'])}-{number(r['max'])}", r["reached"],
            number(r["episodes_to_threshold_median"], 0), number(r["env_steps_to_threshold_median"], 0),
        ])  # fmt: skip
    widths = [max(len(str(row[i])) for row in [header, *body]) for i in range(len(header))]
    for row in [header, *body]:
        lines.append("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines) + "\n"


def csv_text(rows: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if row[k] is None else row[k]) for k in CSV_COLUMNS})
    return buffer.getvalue()
