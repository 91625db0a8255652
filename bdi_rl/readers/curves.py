"""Learning curves for the viewer's charts: per run and learner, smoothed, on a chosen x-axis,
and their aggregate over runs (or over one run's learners).

The pages draw; every number is computed here, so the run page, the compare page and their
tests share one definition. The aggregate follows rliable (Agarwal et al., 2021): with 3 or
more samples the interquartile mean (IQM, the mean of the middle 50 %) and its 95 %
percentile-bootstrap confidence interval, seeded so a page shows the same band each time,
beside the plain mean with a min-max band. Curves are resampled on common x points first:
runs of a sweep end their episodes at different env steps and wall times.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from bdi_rl.readers.runindex import RunIndex
from bdi_rl.trace.kinds import RUN_START

Array = npt.NDArray[np.float64]

#: x-axes a curve can be drawn on: episodes done, env steps (cumulative episode lengths),
#: wall time (seconds since the run's start).
X_AXES = ("episodes", "env_steps", "time")
#: Smoothing: a trailing rolling mean over the window, or an EMA of that span.
METHODS = ("rolling", "ema")
#: What an aggregate is taken over: runs (a run's learners averaged first) or learners.
ACROSS = ("runs", "agents")
EVAL_METRICS = ("return", "success")
#: Training metrics aggregated (evaluations' are too, as eval_return and eval_success).
TRAIN_AGGREGATED = ("return", "success")
#: Fewest samples for an IQM and its confidence interval: with 3, a 25 % trim cuts nothing
#: and the IQM is exactly the mean (below 4, the mean says as much, and is not called IQM).
IQM_MIN_SAMPLES = 4
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0


@dataclass
class AgentSeries:
    """One learner's raw series: training episodes and evaluations, as the index has them."""

    agent: str
    episode_x: dict[str, Array]
    """x of each episode on each axis"""
    train: dict[str, Array]
    eval_x: dict[str, Array]
    evals: dict[str, Array]


@dataclass
class RunSeries:
    run: str
    live: bool
    agents: list[AgentSeries] = field(default_factory=list)


def _floats(values: list[Any]) -> Array:
    return np.array([float(v) if isinstance(v, (int, float)) else math.nan for v in values], dtype=np.float64)


def _success(episode: dict[str, Any]) -> float:
    """The index's ``success`` (one definition per env kind), else the older rule: the goal."""
    stored = episode.get("success")
    if stored is not None:
        return float(bool(stored))
    return float(episode.get("outcome") == "goal")


def agent_series(
    agent: str, episodes: list[dict[str, Any]], evals: list[dict[str, Any]], started: float, warm_episodes: int = 0
) -> AgentSeries:
    """A learner's episodes and evaluations placed on every x-axis; a warm-started learner's
    episodes go on from the ``warm_episodes`` behind its table (its evaluations too)."""
    count = np.arange(1, len(episodes) + 1, dtype=np.float64) + warm_episodes
    lengths = np.nan_to_num(_floats([e.get("length") for e in episodes]), nan=0.0)
    steps = np.cumsum(lengths)
    times = _floats([e.get("ts") for e in episodes]) - started
    after = np.array([int(e.get("after_episodes") or 0) for e in evals], dtype=np.int64)
    eval_steps = np.array([steps[k - 1] if 0 < k <= len(steps) else 0.0 for k in after], dtype=np.float64)
    return AgentSeries(
        agent=agent,
        episode_x={"episodes": count, "env_steps": steps, "time": times},
        train={
            "return": np.nan_to_num(_floats([e.get("return") for e in episodes]), nan=0.0),
            "success": np.array([_success(e) for e in episodes], dtype=np.float64),
            "epsilon": _floats([e.get("epsilon") for e in episodes]),
        },
        eval_x={
            "episodes": after.astype(np.float64) + warm_episodes,
            "env_steps": eval_steps,
            "time": _floats([e.get("ts") for e in evals]) - started,
        },
        evals={
            "return": _floats([e.get("mean_return") for e in evals]),
            "success": _floats([e.get("success_rate") for e in evals]),
        },
    )


def run_series(index: RunIndex) -> RunSeries:
    """Copies of a run's learner series (taken on the event loop, so the numbers can be
    worked out in a thread while the index keeps growing)."""
    start = next((e.get("ts") for e in index.run_events if e["kind"] == RUN_START), None)
    learners = {jid: a for jid, a in sorted(index.agents.items()) if a.episodes or a.evals}
    if not isinstance(start, (int, float)):
        stamps = [e["ts"] for a in learners.values() for e in a.episodes[:1] if isinstance(e.get("ts"), (int, float))]
        start = min(stamps, default=0.0)
    series = RunSeries(index.run_dir.name, index.live)
    for jid, agent in learners.items():
        series.agents.append(
            agent_series(jid, list(agent.episodes), list(agent.evals), float(start), agent.warm_episodes)
        )
    return series


# -- smoothing and sampling -------------------------------------------------------------
def smooth(values: Array, window: int, method: str = "rolling") -> Array:
    """A trailing rolling mean over ``window`` values (fewer at the start), or an EMA of span
    ``window`` (alpha = 2 / (window + 1), starting at the first value); 0 or 1: the values."""
    if window <= 1 or len(values) == 0:
        return values.astype(np.float64)
    if method == "ema":
        from scipy import signal  # scipy costs ~0.7 s to import: only when a curve needs it

        alpha = 2.0 / (window + 1.0)
        out, _ = signal.lfilter([alpha], [1.0, alpha - 1.0], values, zi=[(1.0 - alpha) * values[0]])
        return np.asarray(out, dtype=np.float64)
    if method != "rolling":
        raise ValueError(f"smoothing: {method!r} is not one of {', '.join(METHODS)}")
    sums = np.cumsum(np.insert(values.astype(np.float64), 0, 0.0))
    ends = np.arange(1, len(values) + 1)
    starts = np.maximum(0, ends - window)
    return np.asarray((sums[ends] - sums[starts]) / (ends - starts), dtype=np.float64)


def thin(count: int, most: int) -> npt.NDArray[np.int64]:
    """Indices of at most ``most`` evenly spread points of ``count``, the first and last kept."""
    if count <= most:
        return np.arange(count)
    return np.unique(np.linspace(0, count - 1, most).round().astype(np.int64))


def resample(curves: list[tuple[Array, Array]], points: int) -> tuple[Array, Array]:
    """Curves ``(x, y)`` on common x points: every x of theirs when they have at most
    ``points`` distinct ones, else ``points`` evenly spaced over their span; linear in
    between, NaN where a curve has not reached (a live run) or has not begun."""
    finite = [(x[ok], y[ok]) for x, y in curves for ok in [np.isfinite(x) & np.isfinite(y)]]
    xs = np.unique(np.concatenate([x for x, _ in finite])) if finite else np.empty(0)
    if len(xs) > points:
        xs = np.linspace(xs[0], xs[-1], points)
    grid = np.full((len(curves), len(xs)), np.nan)
    for row, (x, y) in enumerate(finite):
        if len(x):
            order = np.argsort(x, kind="stable")
            inside = (xs >= x[order[0]]) & (xs <= x[order[-1]])
            grid[row, inside] = np.interp(xs[inside], x[order], y[order])
    return xs, grid


def align_evaluations(evals: list[tuple[Array, Array, Array]]) -> tuple[Array, Array]:
    """Evaluations ``(after_episodes, x, y)`` side by side by the episode count they were
    taken after: each column's x is the mean of theirs (on env steps or wall time the runs got
    there at different points), the grid has a row per series. Runs on other schedules (another
    ``eval_every``, a resumed run) are read between their own evaluations, linearly, so that
    every column between a series' first and last evaluation has its value: a column of one run
    alone beside a column of another would draw the aggregate as a line across runs. NaN
    outside a series' span (not evaluated yet, a live run not there yet)."""
    keys = np.unique(np.concatenate([k for k, _, _ in evals])) if evals else np.empty(0)
    grid = np.full((len(evals), len(keys)), np.nan)
    where = np.full_like(grid, np.nan)
    for row, (k, x, y) in enumerate(evals):
        if not len(k):
            continue
        order = np.argsort(k, kind="stable")
        k, x, y = k[order], x[order], y[order]
        inside = (keys >= k[0]) & (keys <= k[-1])
        grid[row, inside] = np.interp(keys[inside], k, y)
        where[row, inside] = np.interp(keys[inside], k, x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        xs = np.nanmean(where, axis=0) if len(evals) else keys
    return np.asarray(xs, dtype=np.float64), grid


# -- statistics ------------------------------------------------------------------------
def iqm(values: npt.ArrayLike, axis: int = 0) -> Any:
    """Interquartile mean: the mean of the middle 50 % (scipy's 25 % trimmed mean)."""
    from scipy import stats

    return stats.trim_mean(values, 0.25, axis=axis)


def iqm_ci(
    samples: Array, confidence: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> tuple[Array, Array]:
    """The IQM's percentile-bootstrap confidence interval for each column of ``samples``
    (rows: runs), as rliable's: the runs resampled with replacement, seeded."""
    from scipy import stats

    samples = np.asarray(samples, dtype=np.float64)
    if samples.ndim == 1:
        samples = samples[:, None]
    with warnings.catch_warnings():  # identical samples: an interval of width 0, no warning
        warnings.simplefilter("ignore")
        result = stats.bootstrap(
            (samples,),
            iqm,
            axis=0,
            vectorized=True,
            n_resamples=resamples,
            batch=max(1, 200_000 // max(1, samples.size)),
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    return np.asarray(result.confidence_interval.low), np.asarray(result.confidence_interval.high)


def aggregate(grid: Array, seed: int = BOOTSTRAP_SEED) -> dict[str, Array]:
    """Per column of ``grid`` (rows: samples, NaN where one has no value): how many there
    are, their mean, min and max, and with IQM_MIN_SAMPLES or more their IQM and its 95 % CI."""
    present = np.isfinite(grid)
    n = present.sum(axis=0)
    out = {key: np.full(grid.shape[1], np.nan) for key in ("mean", "min", "max", "iqm", "ci_low", "ci_high")}
    some = n > 0
    if not some.any():
        return {"n": n.astype(np.float64), **out}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out["mean"][some] = np.nanmean(grid[:, some], axis=0)
        out["min"][some] = np.nanmin(grid[:, some], axis=0)
        out["max"][some] = np.nanmax(grid[:, some], axis=0)
    # Columns with the same samples present are bootstrapped together (vectorised).
    masks: dict[bytes, list[int]] = {}
    for col in np.flatnonzero(n >= IQM_MIN_SAMPLES):
        masks.setdefault(present[:, col].tobytes(), []).append(int(col))
    for listed in masks.values():
        cols = np.array(listed, dtype=np.int64)
        block = grid[np.ix_(present[:, cols[0]], cols)]
        out["iqm"][cols] = iqm(block, axis=0)
        out["ci_low"][cols], out["ci_high"][cols] = iqm_ci(block, seed=seed)
    return {"n": n.astype(np.float64), **out}


# -- the API's answer ------------------------------------------------------------------
def _listed(values: Array, digits: int = 6) -> list[float | None]:
    return [None if not math.isfinite(v) else round(float(v), digits) for v in values]


def _curve(x: Array, ys: dict[str, Array], window: int, method: str, most: int) -> dict[str, Any]:
    keep = thin(len(x), most)
    out: dict[str, Any] = {"x": _listed(x[keep])}
    for name, y in ys.items():  # epsilon is a schedule: never smoothed
        out[name] = _listed(smooth(y, window, method)[keep] if name != "epsilon" else y[keep])
    return out


def curves_payload(
    runs: list[RunSeries],
    x_axis: str = "episodes",
    window: int = 100,
    method: str = "rolling",
    across: str = "runs",
    points: int = 1000,
    bins: int = 200,
    groups: dict[str, list[int]] | None = None,
) -> dict[str, Any]:
    """What ``/api/curves`` answers: each run's learners' curves (training: smoothed, at most
    ``points`` per series; evaluations: as measured) and the aggregate of each metric on at
    most ``bins`` common x points; with ``groups`` (label -> the runs' numbers in ``runs``:
    a sweep's configurations), each group's aggregate too."""
    if x_axis not in X_AXES:
        raise ValueError(f"x: {x_axis!r} is not one of {', '.join(X_AXES)}")
    if method not in METHODS:
        raise ValueError(f"method: {method!r} is not one of {', '.join(METHODS)}")
    if across not in ACROSS:
        raise ValueError(f"across: {across!r} is not one of {', '.join(ACROSS)}")
    shown = []
    # per metric: one (run number, x, y) per learner, smoothed at full resolution; for the
    # evaluations (run number, after_episodes, x, y)
    full: dict[str, list[tuple[int, Array, Array]]] = {m: [] for m in TRAIN_AGGREGATED}
    evaluated: dict[str, list[tuple[int, Array, Array, Array]]] = {f"eval_{m}": [] for m in EVAL_METRICS}
    for k, run in enumerate(runs):
        agents = []
        for a in run.agents:
            x, ex = a.episode_x[x_axis], a.eval_x[x_axis]
            agents.append(
                {
                    "agent": a.agent,
                    "train": _curve(x, a.train, window, method, points),
                    "eval": {"x": _listed(ex), **{m: _listed(a.evals[m]) for m in EVAL_METRICS}},
                }
            )
            for metric in TRAIN_AGGREGATED:
                if len(x):
                    full[metric].append((k, x, smooth(a.train[metric], window, method)))
            for metric in EVAL_METRICS:
                if len(ex):
                    evaluated[f"eval_{metric}"].append((k, a.eval_x["episodes"], ex, a.evals[metric]))
        shown.append({"run": run.run, "live": run.live, "agents": agents})
    summary, samples = _aggregates(full, evaluated, bins, across, None)
    grouped = []
    for label, members in (groups or {}).items():
        metrics, count = _aggregates(full, evaluated, bins, across, set(members))
        grouped.append({"label": label, "runs": members, "samples": count, "metrics": metrics})
    return {
        "x": x_axis,
        "smooth": window,
        "method": method,
        "across": across,
        "live": any(r.live for r in runs),
        "runs": shown,
        "aggregate": {"samples": samples, "iqm_min_samples": IQM_MIN_SAMPLES, "metrics": summary},
        "groups": grouped,
    }


def _aggregates(
    full: dict[str, list[tuple[int, Array, Array]]],
    evaluated: dict[str, list[tuple[int, Array, Array, Array]]],
    bins: int,
    across: str,
    keep: set[int] | None,
) -> tuple[dict[str, Any], int]:
    """The aggregate of each metric over the runs numbered in ``keep`` (None: all), and how
    many samples it is of."""
    full = {m: [e for e in c if keep is None or e[0] in keep] for m, c in full.items()}
    evaluated = {m: [e for e in c if keep is None or e[0] in keep] for m, c in evaluated.items()}
    summary: dict[str, Any] = {}
    aligned = {m: (resample([(x, y) for _, x, y in c], bins), [k for k, _, _ in c]) for m, c in full.items()}
    aligned |= {m: (align_evaluations([e[1:] for e in c]), [e[0] for e in c]) for m, c in evaluated.items()}
    for metric, ((xs, grid), owners) in aligned.items():
        if across == "runs" and owners:  # one sample per run: the mean of its learners
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                grid = np.array(
                    [np.nanmean(grid[[i for i, o in enumerate(owners) if o == k]], axis=0) for k in sorted(set(owners))]
                )
        summary[metric] = {"x": _listed(xs), **{key: _listed(v) for key, v in aggregate(grid).items()}}
    samples = (
        len({k for _, owners in aligned.values() for k in owners})
        if across == "runs"
        else max((len(owners) for _, owners in aligned.values()), default=0)
    )
    return summary, samples


#: The plan-value chart: the goals' abstract states chosen in most often, and points a line.
PLAN_VALUE_STATES = 4
PLAN_VALUE_POINTS = 400


def plan_value_series(choices: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Plan-level values over training: for the (goal, state) pairs an agent chose in most
    often (``plan.choice``, as the run index keeps them), each option's value at each choice
    there, by episode (the last choice of an episode stands for it). One series per option:
    ``{"goal", "state", "plan", "episodes", "values"}``, at most PLAN_VALUE_POINTS points."""
    by_place: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    for choice in choices:
        by_place.setdefault((choice["goal"], choice["state"]), {})[int(choice["episode"] or 0)] = choice
    busiest = sorted(by_place, key=lambda place: -len(by_place[place]))[:PLAN_VALUE_STATES]
    series = []
    for goal, state in busiest:
        episodes = sorted(by_place[(goal, state)])
        kept = [episodes[k] for k in thin(len(episodes), PLAN_VALUE_POINTS)]
        plans: list[str] = []
        for episode in kept:
            plans.extend(p for p in by_place[(goal, state)][episode]["options"] if p not in plans)
        for plan in plans:
            xs, ys = [], []
            for episode in kept:
                choice = by_place[(goal, state)][episode]
                if plan in choice["options"]:
                    xs.append(episode)
                    ys.append(choice["values"][choice["options"].index(plan)])
            series.append({"goal": goal, "state": state, "plan": plan, "episodes": xs, "values": ys})
    return series
