"""``bdi-rl plot``: learning curves across agents and seeds, and a Q-table heatmap (matplotlib).

Reads run directories only (trace, spec, Q-table checkpoints), through
:class:`~bdi_rl.readers.runindex.RunIndex`; writes one image file, atomically.
"""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from bdi_rl.readers.indexcache import default_cache_dir, open_index
from bdi_rl.readers.qgrid import QGridError, load_qgrid
from bdi_rl.readers.runindex import OnDamage
from bdi_rl.store import atomic_write_bytes

#: Episodes in the rolling mean of the curves.
WINDOW = 100


class PlotError(ValueError):
    """Nothing to plot (no run, no episodes); one line for the CLI."""


def rolling_mean(values: np.ndarray, window: int = WINDOW) -> np.ndarray:
    """Mean of the last ``window`` values at each point (fewer at the start)."""
    sums = np.cumsum(np.insert(values.astype(float), 0, 0.0))
    idx = np.arange(1, len(values) + 1)
    lo = np.maximum(0, idx - window)
    means: np.ndarray = (sums[idx] - sums[lo]) / (idx - lo)  # numpy types an indexed array as Any
    return means


def learner_curves(run_dirs: list[Path], on_damage: OnDamage = None) -> list[dict[str, Any]]:
    """One entry per learner of every run: its returns, successes (by the env kind's rule)
    and epsilons per episode, and its greedy evaluations (after how many episodes)."""
    curves = []
    for run_dir in run_dirs:
        index = open_index(run_dir, default_cache_dir(), on_damage)
        for jid, agent in sorted(index.agents.items()):
            if not agent.episodes:
                continue
            curves.append(
                {
                    "run": run_dir.name,
                    "agent": jid.split("@", 1)[0],
                    "returns": np.array([e["return"] or 0.0 for e in agent.episodes]),
                    "success": np.array([1.0 if e["success"] else 0.0 for e in agent.episodes]),
                    "epsilon": np.array([e["epsilon"] if e["epsilon"] is not None else np.nan for e in agent.episodes]),
                    "evals": [
                        (ev["after_episodes"], ev.get("mean_return"), ev.get("success_rate")) for ev in agent.evals
                    ],
                }
            )
    return curves


def _band(ax: Any, series: list[np.ndarray], label: str, color: str) -> None:
    """Mean across learners with a min-max band, over the episodes all of them reached."""
    n = min(len(s) for s in series)
    stack = np.vstack([s[:n] for s in series])
    x = np.arange(1, n + 1)
    ax.plot(x, stack.mean(axis=0), color=color, lw=2, label=label)
    ax.fill_between(x, stack.min(axis=0), stack.max(axis=0), color=color, alpha=0.2, lw=0)


def _evaluations(ax_ret: Any, ax_succ: Any, evals: list[tuple[int, Any, Any]], color: Any, first: bool) -> None:
    """Greedy evaluations over training (``eval_every``, and the final one) as marked lines."""
    if not evals:
        return
    x = [e[0] for e in evals]
    label = "greedy evaluation" if first else None
    style = {"color": color, "marker": "o", "markersize": 3.5, "lw": 1.2, "ls": "--", "label": label}
    ax_ret.plot(x, [np.nan if e[1] is None else e[1] for e in evals], **style)
    ax_succ.plot(x, [np.nan if e[2] is None else e[2] for e in evals], **style)


def _spec_tables(run_dir: Path) -> dict[str, Any]:
    """The run's ``spec.toml`` as a table (empty if it cannot be read)."""
    import tomllib

    try:
        return tomllib.loads((run_dir / "spec.toml").read_text())
    except (OSError, ValueError):
        return {}


def _qtable_panel(ax: Any, run_dir: Path, agent: str) -> str | None:
    """Heatmap of max Q per cell with greedy arrows; returns a reason when it cannot draw."""
    import matplotlib

    try:
        grid = load_qgrid(run_dir, agent)
    except QGridError as exc:
        return str(exc)
    best = np.array([[np.nan if v is None else v for v in row] for row in grid.max_q])
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#d9d9d9")
    image = ax.imshow(best, cmap=cmap)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="max Q")
    for y in range(grid.rows):
        for x in range(grid.cols):
            letter, move = grid.letters[y][x], grid.moves[y][x]
            if letter in ("H", "G"):
                ax.text(x, y, letter, ha="center", va="center", fontsize=11, weight="bold")
            elif move is not None:
                ax.annotate(
                    "",
                    xy=(x + 0.35 * move[0], y + 0.35 * move[1]),
                    xytext=(x, y),
                    arrowprops={"arrowstyle": "->", "color": "white", "lw": 1.2},
                )
    ax.set_title(f"{agent}: max Q and greedy action")
    ax.set_xticks(range(grid.cols))
    ax.set_yticks(range(grid.rows))
    return None


def _joint_panel(ax: Any, run_dir: Path, on_damage: OnDamage = None) -> str | None:
    """A shared world's joint steps (``readers.joint``): where every episode is one step (the
    matrix games), the share of the most played joint actions along training; else the
    length of each joint episode. Returns a reason when the run has no world steps."""
    from bdi_rl.readers.indexcache import default_cache_dir, open_index
    from bdi_rl.readers.joint import JointError, joint_rows

    try:
        rows = list(joint_rows(open_index(run_dir, default_cache_dir(), on_damage)))
    except JointError as exc:
        return str(exc)
    first_agent = rows[0]["agent"] if rows else None
    steps = [(r["episode"], r["step"], r["action"]) for r in rows if r["agent"] == first_agent]
    if not steps:
        return "no joint steps in the trace (the world records them at trace level step)"
    per_episode: dict[int, list[int]] = {}
    for r in rows:
        per_episode.setdefault(r["episode"], []).append(r["action"])
    n_agents = len({r["agent"] for r in rows})
    lengths = np.array([len(actions) // n_agents for actions in per_episode.values()], dtype=float)
    if lengths.max() > 1:
        team: dict[int, float] = {}  # every agent's reward summed over the episode
        for r in rows:
            team[r["episode"]] = team.get(r["episode"], 0.0) + float(r["reward"] or 0.0)
        x = np.array(list(per_episode), dtype=float)  # the world's own episode numbers
        ax.plot(x, rolling_mean(lengths), color="tab:purple", lw=1, label="length")
        ax.set(
            title=f"Joint episode length and team return (rolling mean of {WINDOW})",
            xlabel="joint episode",
            ylabel="steps",
        )
        right = ax.twinx()
        right.plot(x, rolling_mean(np.array(list(team.values()), dtype=float)), color="tab:green", lw=1)
        right.set_ylabel("team return", color="tab:green")
        return None
    joint = [tuple(actions) for actions in per_episode.values()]
    top = [a for a, _ in Counter(joint[-max(1, len(joint) // 10) :]).most_common(3)]
    top += [a for a, _ in Counter(joint).most_common() if a not in top][: 4 - len(top)]
    x = np.array(list(per_episode), dtype=float)
    for action in top:
        share = rolling_mean(np.array([j == action for j in joint], dtype=float))
        ax.plot(x, share, lw=1, label="(" + ", ".join(map(str, action)) + ")")
    ax.set(
        title=f"Joint actions played (share, rolling {WINDOW})",
        xlabel="joint episode",
        ylabel="share",
        ylim=(-0.02, 1.02),
    )
    ax.legend(fontsize=7, loc="center right")
    return None


def plot_runs(run_dirs: list[Path], output: Path, dpi: int = 110, on_damage: OnDamage = None) -> Path:
    """Draw the figure for ``run_dirs`` into ``output`` (format from its suffix). A damaged
    trace is refused (nothing is written) unless ``on_damage`` reads around it: then the
    figure says so too, under its panels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    notices: list[str] = []

    def read_around(notice: str) -> None:
        if notice not in notices:  # a run's index is opened twice for the world's panel
            notices.append(notice)
            if on_damage is not None:
                on_damage(notice)

    damage = read_around if on_damage is not None else None
    curves = learner_curves(run_dirs, damage)
    if not curves:
        raise PlotError("no episodes in these runs' traces: nothing to plot")
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5))
    (ax_ret, ax_succ), (ax_eps, ax_q) = axes
    colors = plt.get_cmap("tab10")
    for i, c in enumerate(curves):
        label = c["agent"] if len(run_dirs) == 1 else f"{c['agent']} ({c['run'].split('__')[2]})"
        ax_ret.plot(
            np.arange(1, len(c["returns"]) + 1),
            rolling_mean(c["returns"]),
            color=colors(i % 10),
            lw=0.8,
            alpha=0.6,
            label=label,
        )
        ax_eps.plot(np.arange(1, len(c["epsilon"]) + 1), c["epsilon"], color=colors(i % 10), lw=0.8)
        _evaluations(ax_ret, ax_succ, c["evals"], colors(i % 10), first=i == 0)
    _band(ax_ret, [rolling_mean(c["returns"]) for c in curves], "mean (min-max band)", "black")
    _band(ax_succ, [rolling_mean(c["success"]) for c in curves], "mean (min-max band)", "tab:green")
    ax_ret.set(title=f"Episodic return (rolling mean of {WINDOW})", xlabel="episode", ylabel="return")
    ax_succ.set(
        title=f"Success rate (rolling {WINDOW}), across {len(curves)} learners",
        xlabel="episode",
        ylabel="success",
        ylim=(-0.02, 1.02),
    )
    ax_eps.set(title="Epsilon", xlabel="episode", ylabel="epsilon")
    ax_ret.legend(fontsize=7, loc="lower right")
    ax_succ.legend(fontsize=8, loc="lower right")
    spec_has_world = "world" in _spec_tables(run_dirs[0])
    if spec_has_world:
        reason = _joint_panel(ax_q, run_dirs[0], damage)
    else:
        reason = _qtable_panel(ax_q, run_dirs[0], curves[0]["agent"])
    if reason is not None:
        ax_q.axis("off")
        ax_q.text(0.5, 0.5, reason, ha="center", va="center", wrap=True)
    title = run_dirs[0].name if len(run_dirs) == 1 else f"{len(run_dirs)} runs"
    fig.suptitle(title)
    fig.tight_layout()
    if notices:
        said = "; ".join(notices)
        fig.text(0.01, 0.003, f"DAMAGED TRACE, read around: {said[:400]}", fontsize=6.5, color="tab:red", wrap=True)
    buf = io.BytesIO()
    fig.savefig(buf, format=output.suffix.lstrip(".") or "png", dpi=dpi)
    plt.close(fig)
    atomic_write_bytes(output, buf.getvalue())
    return output
