"""The command line's arguments: every command, its options and their types (a number out of
range, a malformed host or cell is refused by argparse in one line, exit status 2)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any, NoReturn

from bdi_rl import __version__
from bdi_rl.cli.errors import EXIT_BAD_INPUT


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line like every other error (no usage dump)."""

    def error(self, message: str) -> NoReturn:
        where = "" if self.prog == "bdi-rl" else f"{self.prog}: "  # the top parser: said once
        print(f"bdi-rl: error: {where}{message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


class _Version(argparse.Action):
    """``--version``: the version and how the runtime runs (bdi_rl/compiled.py), worked out only
    when asked (it reads every compiled module's source)."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_args: Any, **_kwargs: Any) -> NoReturn:
        from bdi_rl import compiled

        print(f"bdi-rl {__version__} ({compiled.describe()})")
        parser.exit()


def _number(kind: type, low: float | None = None, high: float | None = None, low_open: bool = False) -> Any:
    """An argparse type: ``kind`` in range, finite; the message names the range."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'an integer' if kind is int else 'a number'}, got {text[:40]!r}"
            ) from None
        if isinstance(value, float) and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text[:40]!r}")
        too_low = low is not None and (value <= low if low_open else value < low)
        if too_low or (high is not None and value > high):
            if high is None:
                wanted = f"{'>' if low_open else '>='} {low}"
            else:
                wanted = f"in {'(' if low_open else '['}{low}, {high}]"
            raise argparse.ArgumentTypeError(f"expected a value {wanted}, got {text[:40]}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


_PORT = _number(int, 1, 65535)


def _host_port(text: str) -> tuple[str, int]:
    """An argparse type: ``HOST:PORT`` with a port in 1-65535."""
    from bdi_rl.spec import parse_host_port

    try:
        return parse_host_port(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


_host_port.__name__ = "HOST:PORT"


#: A DNS host name: dot-separated labels of letters, digits and inner hyphens.
_HOST_NAME = r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*"


def _host_name(text: str) -> str:
    """An argparse type: a DNS host name (``--allow-host``; IP literals are always allowed)."""
    import re

    if len(text) > 253 or not re.fullmatch(_HOST_NAME, text):
        raise argparse.ArgumentTypeError(f"expected a host name such as viewer.example.org, got {text[:60]!r}")
    return text.lower()


_host_name.__name__ = "NAME"


_ALLOW_HOST_HELP = (
    "a host name the viewer also answers to (a reverse proxy's; repeatable). It answers to "
    "IP addresses, localhost and the name it is bound to, and refuses other names (DNS rebinding)"
)


_COUNT = _number(int, 0)


def _env_override(text: str) -> tuple[str, Any]:
    """An argparse type: ``KEY=VALUE`` with VALUE in TOML (``false``, ``"8x8"``, ``[...]``);
    a bare word that is no TOML value is taken as text (``map_name=8x8``)."""
    import re
    import tomllib

    key, eq, value = text.partition("=")
    if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", key):
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE with KEY a keyword argument's name, got {text[:60]!r}")
    try:
        return key, tomllib.loads(f"v = {value}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
        if re.fullmatch(r"[A-Za-z0-9_.-]{1,200}", value):
            return key, value
        raise argparse.ArgumentTypeError(f"{key}: not a TOML value: {value[:60]!r}") from None


_env_override.__name__ = "KEY=VALUE"


def _cell(text: str) -> tuple[int, int]:
    """An argparse type: ``X,Y``, two integers >= 0."""
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip().isdigit() and len(p.strip()) <= 6 for p in parts):
        raise argparse.ArgumentTypeError(f"expected X,Y (two integers >= 0), got {text[:40]!r}")
    return int(parts[0]), int(parts[1])


_cell.__name__ = "X,Y"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="bdi-rl",
        description="BDI (AgentSpeak) agents that learn with tabular Q-learning over XMPP.",
    )
    parser.add_argument("--version", action=_Version, help="the version, and whether the runtime runs compiled")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    run = sub.add_parser("run", help="run an experiment on one machine (embedded XMPP server)")
    run.add_argument("spec", nargs="?", help="experiment spec (.toml), or the name of a shipped one")
    run.add_argument(
        "--resume",
        type=Path,
        metavar="RUN_DIR",
        help="continue an interrupted run from its latest checkpoints (instead of a spec)",
    )
    run.add_argument("--episodes", type=_number(int, 1), help="training episodes per learner")
    run.add_argument("--seed", type=_COUNT, help="base seed")
    run.add_argument("--trace", choices=["episode", "step", "cycle"], help="trace level")
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="change one setting of the spec: learning.alpha=0.2, agents.learner.asl='\"team-learner.asl\"', "
        "env.kwargs.is_slippery=false (the value is TOML; may repeat)",
    )
    run.add_argument("--runs", type=Path, default=Path("runs"), help="runs directory (default: runs)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    # bdi-rl serve's children: print the run directory on stdout as soon as it exists
    run.add_argument("--announce-run-dir", action="store_true", help=argparse.SUPPRESS)
    run.add_argument(
        "--view", action="store_true", help="serve the web viewer during the run (spec [viewer]; Ctrl-C stops it after)"
    )
    run.add_argument("--view-port", type=_PORT, help="viewer port (default: the spec's, 8765)")
    run.add_argument(
        "--warm-start",
        type=Path,
        metavar="RUN_DIR|FILE",
        help="every learner starts from its Q-table in RUN_DIR (by agent name), or "
        "from FILE; checked against the env first",
    )

    play = sub.add_parser("play", help="greedy episodes of a trained Q-table, learning nothing: an evaluation run")
    play.add_argument("source", type=Path, metavar="CHECKPOINT_OR_RUN", help="a run directory, or a checkpoint file")
    play.add_argument("--agent", help="whose table, in a run of several learners (learner-2)")
    play.add_argument(
        "--episodes", type=_number(int, 1, 10_000_000), default=100, help="episodes to play (default: 100)"
    )
    play.add_argument("--seed", type=_COUNT, help="the env's seed (default: the played run's)")
    play.add_argument(
        "--env",
        type=_env_override,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an env kwarg to change, the value in TOML (is_slippery=false, map_name=8x8, desc=[...]); "
        "the state space must stay the table's (repeatable)",
    )
    play.add_argument("--goal", type=_cell, metavar="X,Y", help="move the map's goal to this cell (FrozenLake)")
    play.add_argument(
        "--policy-only", action="store_true", help="the table alone in a plain loop: no plans, no XMPP (faster)"
    )
    play.add_argument("--runs", type=Path, default=Path("runs"), help="where the evaluation run goes (default: runs)")
    play.add_argument("--no-progress", action="store_true", help="no progress bar")
    play.add_argument("--announce-run-dir", action="store_true", help=argparse.SUPPRESS)

    def role(name: str, help_text: str) -> argparse.ArgumentParser:
        cmd = sub.add_parser(name, help=help_text)
        cmd.add_argument("spec", help="experiment spec (.toml), or the name of a shipped one")
        cmd.add_argument(
            "--xmpp",
            required=True,
            metavar="HOST:PORT",
            type=_host_port,
            help="XMPP server (its host name is the agents' domain unless --domain)",
        )
        cmd.add_argument("--domain", help="XMPP domain of the agents' JIDs")
        cmd.add_argument("--runs", type=Path, default=Path("runs"), help="runs directory")
        cmd.add_argument(
            "--password-file", type=Path, help="file holding the agents' XMPP password (default: $BDI_RL_XMPP_PASSWORD)"
        )
        return cmd

    agent = role("agent", "run one agent or group of a spec in this process")
    who = agent.add_mutually_exclusive_group(required=True)
    who.add_argument("--name", action="append", help="agent or group name (repeatable)")
    who.add_argument(
        "--claim", metavar="GROUP", help="run one agent of GROUP, named by telemetry (for compose --scale)"
    )
    agent.add_argument(
        "--join-timeout",
        type=_number(float, 0, 86400, low_open=True),
        default=120.0,
        help="seconds to wait for the telemetry agent (default: 120)",
    )
    telemetry = role("telemetry", "run the telemetry agent of a spec: owns the run directory and its trace")
    telemetry.add_argument(
        "--run", type=Path, metavar="RUN_DIR", help="continue this run (a restarted telemetry process)"
    )
    telemetry.add_argument(
        "--view",
        metavar="HOST:PORT",
        type=_host_port,
        help="also serve the web viewer over --runs, until stopped",
    )
    telemetry.add_argument(
        "--ready-file",
        type=Path,
        metavar="FILE",
        help="a file that exists exactly while telemetry accepts agents (holds the run directory): "
        "a container healthcheck's test",
    )
    telemetry.add_argument("--allow-host", action="append", default=[], type=_host_name, help=_ALLOW_HOST_HELP)
    view = sub.add_parser("view", help="web viewer over a runs directory (runs, curves, Mind Inspector)")
    view.add_argument("--runs", type=Path, default=Path("runs"), help="runs directory (default: runs)")
    view.add_argument(
        "--host", default="127.0.0.1", help="bind address (default 127.0.0.1; anything else exposes your traces)"
    )
    view.add_argument("--port", type=_PORT, default=8765, help="port (default: 8765)")
    view.add_argument("--allow-host", action="append", default=[], type=_host_name, help=_ALLOW_HOST_HELP)
    serve = sub.add_parser("serve", help="the viewer as a control surface: start, queue and stop runs and seed sweeps")
    serve.add_argument("--runs", type=Path, default=Path("runs"), help="runs directory (default: runs)")
    serve.add_argument(
        "--host", default="127.0.0.1", help="bind address (default 127.0.0.1; anything else exposes your traces)"
    )
    serve.add_argument("--port", type=_PORT, default=8765, help="port (default: 8765)")
    serve.add_argument("--allow-host", action="append", default=[], type=_host_name, help=_ALLOW_HOST_HELP)
    serve.add_argument(
        "--jobs", type=_number(int, 1, 1024), help="most runs at once, the rest queued (default: the CPU count)"
    )
    serve.add_argument(
        "--process-per-run",
        action="store_true",
        help="each run in a process of its own (default: worker processes run one run after another)",
    )
    sweep = sub.add_parser(
        "sweep", help="every run of a sweep file: axes over any spec setting x seeds, a grid or a random draw"
    )
    sweep.add_argument("file", type=Path, nargs="?", help="the sweep file (.toml: spec, method, [axes])")
    sweep.add_argument(
        "--continue",
        dest="continue_sweep",
        metavar="SWEEP",
        help="finish a stopped sweep (its id, or its record): finished runs stay, interrupted ones resume",
    )
    sweep.add_argument("--runs", type=Path, default=Path("runs"), help="runs directory (default: runs)")
    sweep.add_argument(
        "--workers", type=_number(int, 1, 1024), help="most runs at once, the rest queued (default: the CPU count)"
    )
    sweep.add_argument("--no-progress", action="store_true", help="no progress line")
    sweep.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run on a Dask cluster (tcp://HOST:PORT of its scheduler); runs/ must be the same path on every worker",
    )
    sweep.add_argument(
        "--process-per-run",
        action="store_true",
        help="each run in a process of its own (default: each worker process runs one run after another)",
    )
    # bdi-rl sweep's workers: runs one after another, read from stdin (bdi_rl.cli.worker);
    # without help=, argparse does not list it
    sub.add_parser("sweep-worker")
    report = sub.add_parser(
        "sweep-report",
        help="a sweep's results per configuration: IQM with its 95 %% CI, spread, runs that reached a threshold",
    )
    report.add_argument("sweep", metavar="SWEEP_ID_OR_RECORD", help="a sweep id, or the record bdi-rl sweep printed")
    report.add_argument("--runs", type=Path, default=Path("runs"), help="runs directory (default: runs)")
    report.add_argument("--metric", choices=["success", "return"], default="success", help="default: success")
    report.add_argument("--threshold", type=float, default=0.7, help="what a run must reach in training (default 0.7)")
    report.add_argument(
        "--window", type=_number(int, 1, 1_000_000), default=100, help="training episodes averaged (default 100)"
    )
    report.add_argument("--csv", type=Path, help="also write the table as CSV")
    inspect = sub.add_parser("inspect", help="an agent's mind at one point of a run, in the terminal")
    inspect.add_argument("run", help="run directory, or a run id under --runs")
    inspect.add_argument("--runs", type=Path, default=Path("runs"), help="runs directory (default: runs)")
    inspect.add_argument("--agent", required=True, help="agent name (learner-1) or bare JID")
    where = inspect.add_mutually_exclusive_group()
    where.add_argument("--event", type=_COUNT, help="the agent's event number (default: its last)")
    where.add_argument("--episode", type=_COUNT, help="an episode (with --step: a step of it)")
    inspect.add_argument("--step", type=_COUNT, help="a step of --episode")
    _skip_damaged(inspect)
    search = sub.add_parser("search", help="when beliefs matching a pattern were first added and removed, by whom")
    search.add_argument("run", help="run directory, or a run id under --runs")
    search.add_argument("pattern", help="hazard, hazard(_, _), hazard(3, Y) ... (README: Search)")
    search.add_argument("--runs", type=Path, default=Path("runs"), help="runs directory (default: runs)")
    search.add_argument("--agent", help="only this agent's beliefs (learner-1, or a bare JID)")
    search.add_argument("--limit", type=_number(int, 1), default=500, help="most hits printed (default: 500)")
    _skip_damaged(search)
    plot = sub.add_parser("plot", help="learning curves across agents and seeds, and a Q heatmap (PNG/SVG/PDF)")
    plot.add_argument("run", nargs="+", help="run directories, or run ids under --runs (several: seeds)")
    plot.add_argument("--runs", type=Path, default=Path("runs"), help="runs directory (default: runs)")
    plot.add_argument("-o", "--output", type=Path, required=True, help="image file (.png, .svg, .pdf)")
    _skip_damaged(plot)
    render = sub.add_parser("render", help="an episode on its grid world as a video (GIF or MP4), from the trace")
    render.add_argument("run", help="run directory, or a run id under --runs")
    render.add_argument("--runs", type=Path, default=Path("runs"), help="runs directory (default: runs)")
    render.add_argument("--agent", required=True, help="a learner (learner-1, or a bare JID)")
    render.add_argument("--episode", type=_COUNT, required=True, help="the episode to draw")
    render.add_argument("-o", "--output", type=Path, required=True, help="video file (.gif or .mp4)")
    render.add_argument(
        "--fps", type=_number(float, 0, 60, low_open=True), default=4.0, help="frames a second (default: 4)"
    )
    _skip_damaged(render)
    export = sub.add_parser("export", help="a run's curves as CSV or TensorBoard scalars (CleanRL tags)")
    export.add_argument("run", help="run directory, or a run id under --runs")
    export.add_argument("--runs", type=Path, default=Path("runs"), help="runs directory (default: runs)")
    _skip_damaged(export)
    target = export.add_mutually_exclusive_group(required=True)
    target.add_argument("--csv", type=Path, metavar="FILE", help="one row per episode and evaluation")
    target.add_argument(
        "--joint", type=Path, metavar="FILE", help="a shared world's joint steps as CSV: one row per agent per step"
    )
    target.add_argument(
        "--tensorboard",
        type=Path,
        metavar="DIR",
        help="writes DIR/<run>/<agent>/ event files (needs the [tensorboard] extra)",
    )
    dashboard = sub.add_parser("dashboard", help="a desktop window following a run's curves live (GUI extra)")
    dashboard.add_argument("run", help="run directory, or a run id under --runs")
    dashboard.add_argument("--runs", type=Path, default=Path("runs"), help="runs directory (default: runs)")
    dashboard.add_argument(
        "--screenshot", type=Path, metavar="FILE.png", help="render one frame into FILE.png and exit"
    )
    qtable = sub.add_parser("qtable", help="Q-table checkpoints: list, show, diff, export and import them")
    qtable_sub = qtable.add_subparsers(dest="qtable_command", required=True, metavar="list|show|diff|export|import")
    listed = qtable_sub.add_parser("list", help="every checkpoint under a runs directory: the checkpoint library")
    listed.add_argument("runs", type=Path, nargs="?", default=Path("runs"), help="runs directory (default: runs)")
    exported = qtable_sub.add_parser("export", help="a checkpoint or a run's tables as one file, with their metadata")
    exported.add_argument("source", type=Path, metavar="RUN_OR_CHECKPOINT", help="a run directory or a checkpoint")
    exported.add_argument("file", type=Path, help="the file to write (a zip archive)")
    imported = qtable_sub.add_parser("import", help="an exported file (or a checkpoint) as a run directory of its own")
    imported.add_argument("file", type=Path, help="a file of qtable export, or one checkpoint (.npz)")
    imported.add_argument("--runs", type=Path, default=Path("runs"), help="runs directory (default: runs)")
    show = qtable_sub.add_parser("show", help="metadata, and the greedy policy on the map (grid worlds)")
    show.add_argument("file", type=Path, help="a checkpoint (runs/<run>/qtables/<agent>.npz)")
    compare = qtable_sub.add_parser("diff", help="largest Q changes and states whose greedy action differs")
    compare.add_argument("a", type=Path, help="checkpoint A")
    compare.add_argument("b", type=Path, help="checkpoint B")
    compare.add_argument("--top", type=_number(int, 1), default=10, help="largest changes listed (default: 10)")
    return parser


def _skip_damaged(command: argparse.ArgumentParser) -> None:
    """A reader's choice for a damaged trace: refuse it (the default) or read around it."""
    command.add_argument(
        "--skip-damaged",
        action="store_true",
        help="read around damaged trace lines (each run's first one is named on stderr) instead of refusing the run",
    )
