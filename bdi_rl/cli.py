"""The ``bdi-rl`` command line.

One error boundary (:func:`main`): bad input (spec, plan library, env, checkpoint, trace,
argument) is one line on stderr and exit status 2, found before anything is written under
``runs/``; any other exception is one line naming what failed, exit status 1, and its
traceback in a file the line names (:mod:`bdi_rl.crashlog`). SIGTERM (``docker stop``,
``docker compose down``, systemd) does exactly what Ctrl-C does.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import errno
import gc
import logging
import math
import os
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from bdi_rl import __version__

T = TypeVar("T")

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class BadInput(Exception):
    """Any user error: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line like every other error (no usage dump)."""

    def error(self, message: str) -> NoReturn:
        where = "" if self.prog == "bdi-rl" else f"{self.prog}: "  # the top parser: said once
        print(f"bdi-rl: error: {where}{message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


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


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="bdi-rl",
        description="BDI (AgentSpeak) agents that learn with tabular Q-learning over XMPP.",
    )
    parser.add_argument("--version", action="version", version=f"bdi-rl {__version__}")
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


def _on_damage(args: argparse.Namespace) -> Callable[[str], None] | None:
    """``--skip-damaged``: read around damaged trace lines, saying so on stderr; else None:
    a damaged trace is refused (one line naming ``trace.jsonl:LINE``, exit status 2)."""
    return _warn if args.skip_damaged else None


def _warn(notice: str) -> None:
    print(f"bdi-rl: warning: {notice}", file=sys.stderr, flush=True)


def _quiet_libraries() -> None:
    """SPADE, slixmpp and pyjabber chatter at INFO; users want the bar and the summary."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # A refused login also raises AuthenticationFailure, which main reports as one line.
    logging.getLogger("slixmpp.features.feature_mechanisms.mechanisms").setLevel(logging.CRITICAL)
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="ERROR")


def prepare_agent_process() -> None:
    """What the commands that run agents do to the process first (benchmarks that run agents
    without the CLI call it too): quieter libraries, then every library patch applied
    (bdi_rl/patches.py), before any plan is compiled or agent built."""
    _quiet_libraries()
    _patch_libraries()


def _patch_libraries() -> None:
    from bdi_rl.patches import apply_all

    apply_all()


def _spec_to_resume(args: argparse.Namespace) -> tuple[Any, Any]:
    """The resolved spec of the run ``--resume`` continues, which must not have finished, and
    the run's writer lock, held from here on (a second writer is refused before it reads)."""
    import json

    from bdi_rl.spec import load_spec
    from bdi_rl.store import SPEC_FILE, SUMMARY_FILE, TRACE_FILE, RunWriter

    run_dir: Path = args.resume
    given = (["the spec"] if args.spec is not None else []) + [
        f"--{name.replace('_', '-')}"
        for name in ("episodes", "seed", "trace", "warm_start")
        if getattr(args, name) is not None
    ]
    if given:
        raise BadInput(f"--resume continues the run as its {SPEC_FILE} says: drop {', '.join(given)}")
    if not (run_dir / SPEC_FILE).is_file():
        raise BadInput(f"--resume {run_dir}: not a run directory (no {SPEC_FILE})")
    writer = RunWriter.acquire(run_dir, "bdi-rl run --resume")
    try:
        try:
            summary = json.loads((run_dir / SUMMARY_FILE).read_text())
        except (OSError, ValueError):
            summary = None  # killed: no summary yet
        if isinstance(summary, dict) and not summary.get("interrupted"):
            raise BadInput(f"--resume {run_dir}: the run finished; nothing to resume")
        stopped_in_startup = isinstance(summary, dict) and not summary.get("agents")
        if not (run_dir / TRACE_FILE).is_file() and not stopped_in_startup:
            raise BadInput(f"--resume {run_dir}: not a run directory (no {TRACE_FILE})")
        spec = load_spec(run_dir / SPEC_FILE)
        if spec.play is not None:
            raise BadInput(f"--resume {run_dir}: an evaluation (bdi-rl play) is not resumed: play the table again")
        return spec, writer
    except BaseException:
        writer.release()
        raise


def _terminate_like_interrupt() -> None:
    """SIGTERM raises KeyboardInterrupt, as Ctrl-C does: every role stops the same way."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)


def _until_signalled(loop: asyncio.AbstractEventLoop, work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` on ``loop``; Ctrl-C or SIGTERM cancels it, so it can stop cleanly (the
    learners flush their traces and save their tables). KeyboardInterrupt if the work ended
    by being cancelled rather than by handling it."""
    task = loop.create_task(work)
    stops = (signal.SIGINT, signal.SIGTERM)
    for sig in stops:
        loop.add_signal_handler(sig, task.cancel)
    try:
        return loop.run_until_complete(task)
    except asyncio.CancelledError:
        raise KeyboardInterrupt from None
    finally:
        for sig in stops:
            loop.remove_signal_handler(sig)
        _terminate_like_interrupt()  # asyncio leaves SIGTERM at its default (die at once)


def _check_runs(runs: Path, must_exist: bool = False) -> None:
    from bdi_rl.store import RunsDirError, check_runs_dir

    try:
        check_runs_dir(runs, must_exist=must_exist)
    except RunsDirError as exc:
        raise BadInput(f"--runs {exc}") from None


def cmd_run(args: argparse.Namespace) -> int:
    from bdi_rl.console import print_summary, progress_bar
    from bdi_rl.spec import load_spec, resolve_spec_path
    from bdi_rl.xmpp.liveness import STALLED, stall_line
    from bdi_rl.xmpp.runner import run_experiment
    from bdi_rl.xmpp.setup import prepare_experiment

    writer = None
    if args.resume is not None:
        spec, writer = _spec_to_resume(args)
    elif args.spec is None:
        raise BadInput("run: give a spec, or --resume RUN_DIR")
    else:
        spec = load_spec(
            resolve_spec_path(args.spec), {"episodes": args.episodes, "seed": args.seed, "trace": args.trace}
        )
    if args.warm_start is not None:
        try:
            found = args.warm_start.exists()
        except OSError as exc:
            raise BadInput(f"--warm-start: cannot use this path: {exc.strerror}") from None
        if not found:
            raise BadInput(f"--warm-start {args.warm_start}: no such run directory or checkpoint file")
        for group in spec.agents:
            if group.role == "learner":
                group.warm_start = str(args.warm_start.resolve())
    if args.resume is None:
        _check_runs(args.runs)
    # Every check (env, plans, warm starts, resumed trace and tables, XMPP domain) before the
    # viewer listens or a run directory exists.
    setups = prepare_experiment(spec, resume=args.resume)
    password = None
    if spec.xmpp.server != "embedded":  # its accounts outlive the run: a password of the user's
        from bdi_rl.xmpp.roles import read_password

        password = read_password(None)
    if args.resume is None:
        args.runs.mkdir(parents=True, exist_ok=True)  # checked, but a file system may still refuse
    from bdi_rl.xmpp.runtime import event_loop

    loop = event_loop()
    viewer = None
    if args.view or spec.viewer.enabled:
        host, port = spec.viewer.host, args.view_port or spec.viewer.port
        viewer = _start_viewer(loop, args.runs, host, port)
    on_run_dir: Callable[[Path], None] | None = None
    if args.announce_run_dir:  # for bdi-rl serve, which learns its children's run ids so
        from bdi_rl.control.jobs import announce_run_dir

        on_run_dir = announce_run_dir
    with progress_bar(enabled=not args.no_progress) as on_progress:
        # Ctrl-C / SIGTERM: learners stop, traces are flushed, Q-tables and summary saved.
        result = _until_signalled(
            loop,
            run_experiment(
                spec,
                args.runs,
                on_progress,
                resume=args.resume,
                writer=writer,
                setups=setups,
                xmpp_password=password,
                on_run_dir=on_run_dir,
            ),
        )
    print_summary(result.summary)
    if result.summary.get("interrupted"):
        print(f"bdi-rl: interrupted; what was learned so far is in {result.run_dir}", file=sys.stderr)
        print(result.run_dir)
        return 130
    stalled = stall_line(result.failures)
    if stalled is not None:  # one line for the run, naming each agent and what it waited for
        print(f"bdi-rl: {stalled}", file=sys.stderr)
    _print_failures({agent: reason for agent, reason in result.failures.items() if not reason.startswith(STALLED)})
    print(result.run_dir, flush=True)
    if viewer is not None:
        from bdi_rl.readers.viewer import serve_until_stopped

        print("bdi-rl: the run is over; the viewer keeps serving until Ctrl-C", file=sys.stderr)
        loop.run_until_complete(serve_until_stopped(viewer))
    return EXIT_FAILED if result.failures else EXIT_OK


def _print_failures(failures: dict[str, str]) -> None:
    """One line per reason: agents stopped for the same reason (a full disk, a stall) share it."""
    by_reason: dict[str, list[str]] = {}
    for agent, reason in failures.items():
        by_reason.setdefault(reason, []).append(agent)
    for reason, agents in by_reason.items():
        who = f"agent {agents[0]}" if len(agents) == 1 else f"agents {', '.join(agents)}"
        print(f"bdi-rl: {who} failed: {reason}", file=sys.stderr)


def _start_viewer(loop: Any, runs: Path, host: str, port: int, allow_hosts: Sequence[str] = ()) -> Any:
    """Start the viewer on ``loop`` (beside a run or telemetry); BadInput if it cannot listen."""
    from bdi_rl.readers.viewer import start_viewer
    from bdi_rl.readers.webserver import url_of

    runs.mkdir(parents=True, exist_ok=True)
    try:
        viewer = loop.run_until_complete(start_viewer(runs, host, port, allow_hosts))
    except OSError as exc:
        raise BadInput(_cannot_listen("viewer", host, port, exc)) from None
    print(f"bdi-rl viewer: {url_of(host, port)}", file=sys.stderr, flush=True)
    return viewer


def _cannot_listen(what: str, host: str, port: int, exc: OSError) -> str:
    """One line for an address the viewer cannot bind (a port in use: someone else's server);
    the reason as the OS says it (asyncio's own message repeats the address)."""
    import os

    return f"{what}: cannot listen on {host}:{port}: {os.strerror(exc.errno) if exc.errno else exc}"


def _xmpp_address(address: tuple[str, int], domain: str | None) -> tuple[str, int]:
    """The agents' JID domain (``--domain``, else the host of ``--xmpp``) and the port."""
    host, port = address
    return (domain or host).lower(), port


def cmd_agent(args: argparse.Namespace) -> int:
    from bdi_rl.spec import load_spec, resolve_spec_path
    from bdi_rl.xmpp.roles import checked_setups, claim_name, read_password, run_agents

    spec = load_spec(resolve_spec_path(args.spec))
    domain, port = _xmpp_address(args.xmpp, args.domain)
    password = read_password(args.password_file)
    _check_runs(args.runs)
    every_setup = checked_setups(spec)  # before a claim takes a name from telemetry
    from bdi_rl.xmpp.runtime import event_loop

    loop = event_loop()
    names = args.name
    if args.claim:
        names = [_until_signalled(loop, claim_name(args.claim, spec, domain, port, password, args.join_timeout))]
    failures = _until_signalled(
        loop, run_agents(spec, names, args.runs, domain, port, password, args.join_timeout, every_setup)
    )
    _print_failures(failures)
    if any(reason == "interrupted" for reason in failures.values()):
        return 130
    return EXIT_FAILED if failures else EXIT_OK


def _check_ready_file(path: Path | None) -> None:
    """``--ready-file``: a stale one (a container restarted after SIGKILL) would say ready at
    once, so it goes now; one that could never be written is refused before anything."""
    if path is None:
        return
    parent = path.absolute().parent
    if path.is_dir() or not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise BadInput(f"--ready-file {path}: not a file in a writable directory")
    path.unlink(missing_ok=True)


def cmd_telemetry(args: argparse.Namespace) -> int:
    from bdi_rl.spec import load_spec, resolve_spec_path
    from bdi_rl.xmpp.roles import existing_run, read_password, serve_telemetry

    spec = load_spec(resolve_spec_path(args.spec))
    domain, port = _xmpp_address(args.xmpp, args.domain)
    password = read_password(args.password_file)
    _check_runs(args.runs)
    _check_ready_file(args.ready_file)
    # the run it continues is checked and locked before the viewer's URL is printed
    resume = existing_run(args.run, spec) if args.run is not None else None
    from bdi_rl.xmpp.runtime import event_loop

    loop = event_loop()
    viewer = None
    if args.view is not None:
        view_host, view_port = args.view
        viewer = _start_viewer(loop, args.runs, view_host, view_port, args.allow_host)
    result = _until_signalled(
        loop, serve_telemetry(spec, args.runs, domain, port, password, resume=resume, ready_file=args.ready_file)
    )
    summary = result.summary
    failures = {name: entry["failure"] for name, entry in summary["agents"].items() if "failure" in entry}
    _print_failures(failures)
    print(result.run_dir, flush=True)
    if viewer is not None and not result.stop_asked:  # (a stop asked as it left: the viewer's too)
        from bdi_rl.readers.viewer import serve_until_stopped

        loop.run_until_complete(serve_until_stopped(viewer))
    # The run's outcome, as `bdi-rl run` gives it (`docker compose wait telemetry`)
    if summary.get("interrupted"):
        return 130
    return EXIT_FAILED if failures else EXIT_OK


def cmd_view(args: argparse.Namespace) -> int:
    from bdi_rl.readers.viewer import serve

    _check_runs(args.runs, must_exist=True)
    try:  # prints its URL once it listens: never one that is someone else's server
        serve(args.runs, args.host, args.port, args.allow_host)
    except OSError as exc:
        raise BadInput(_cannot_listen("--host/--port", args.host, args.port, exc)) from None
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    import os

    from bdi_rl.control.app import serve

    _check_runs(args.runs)
    args.runs.mkdir(parents=True, exist_ok=True)
    try:
        serve(args.runs, args.host, args.port, args.jobs or os.cpu_count() or 1, args.allow_host)
    except OSError as exc:
        raise BadInput(_cannot_listen("--host/--port", args.host, args.port, exc)) from None
    return EXIT_OK


def cmd_inspect(args: argparse.Namespace) -> int:
    from bdi_rl.readers.inspector import find_run, inspect_mind, print_mind

    if args.step is not None and args.episode is None:
        raise BadInput("--step needs --episode")
    run_dir = find_run(args.run, args.runs)
    print_mind(inspect_mind(run_dir, args.agent, args.event, args.episode, args.step, _on_damage(args)))
    return EXIT_OK


def cmd_search(args: argparse.Namespace) -> int:
    from bdi_rl.readers.indexcache import default_cache_dir, open_index
    from bdi_rl.readers.inspector import find_run, resolve_agent
    from bdi_rl.readers.pattern import PatternError, parse_pattern
    from bdi_rl.readers.search import format_result, search_run

    try:
        pattern = parse_pattern(args.pattern)
    except PatternError as exc:
        raise BadInput(f"PATTERN: {exc}") from None
    index = open_index(find_run(args.run, args.runs), default_cache_dir(), _on_damage(args))
    agent = resolve_agent(index, args.agent) if args.agent is not None else None
    print(format_result(search_run(index, pattern, agent, args.limit)))
    return EXIT_OK


def cmd_render(args: argparse.Namespace) -> int:
    from bdi_rl.readers.indexcache import default_cache_dir, open_index
    from bdi_rl.readers.inspector import find_run, resolve_agent
    from bdi_rl.readers.render import write_video

    index = open_index(find_run(args.run, args.runs), default_cache_dir(), _on_damage(args))
    frames = write_video(index, resolve_agent(index, args.agent), args.episode, args.output, args.fps)
    print(f"{args.output}: {frames} frames")
    return EXIT_OK


def cmd_plot(args: argparse.Namespace) -> int:
    from bdi_rl.readers.inspector import find_run
    from bdi_rl.readers.plots import plot_runs

    if args.output.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise BadInput(f"-o {args.output}: expected a .png, .svg or .pdf file")
    if not args.output.parent.is_dir():
        raise BadInput(f"-o {args.output}: no such directory {args.output.parent}")
    print(plot_runs([find_run(run, args.runs) for run in args.run], args.output, on_damage=_on_damage(args)))
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from bdi_rl.readers.export import export_csv, export_joint_csv, export_tensorboard
    from bdi_rl.readers.inspector import find_run

    run_dir = find_run(args.run, args.runs)
    warn = _on_damage(args)
    read_around: list[str] = []

    def on_damage(notice: str) -> None:  # said on stderr, and beside what was written
        read_around.append(notice)
        if warn is not None:
            warn(notice)

    damage = on_damage if warn is not None else None
    for flag, target, export in (("--csv", args.csv, export_csv), ("--joint", args.joint, export_joint_csv)):
        if target is not None:
            if not target.parent.is_dir():
                raise BadInput(f"{flag} {target}: no such directory {target.parent}")
            count = export(run_dir, target, damage)
            print(f"{target}: {count} rows{_read_around_aside(read_around)}")
            return EXIT_OK
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        raise BadInput("--tensorboard needs the tensorboard package: pip install 'bdi-rl[tensorboard]'") from None
    print(f"{export_tensorboard(run_dir, args.tensorboard, damage)}{_read_around_aside(read_around)}")
    return EXIT_OK


def _read_around_aside(notices: list[str]) -> str:
    return " (from a damaged trace: its damaged lines were read around, as said above)" if notices else ""


def cmd_dashboard(args: argparse.Namespace) -> int:
    from bdi_rl.readers.dashboard import Dashboard
    from bdi_rl.readers.inspector import find_run

    run_dir = find_run(args.run, args.runs)
    if args.screenshot is not None and args.screenshot.suffix.lower() != ".png":
        raise BadInput(f"--screenshot {args.screenshot}: expected a .png file")
    board = Dashboard(run_dir, on_damage=_warn)  # a live view: it reads around damage, saying so
    if args.screenshot is None:
        board.run()
        return EXIT_OK
    board.screenshot(args.screenshot)
    print(args.screenshot)
    return EXIT_OK


def cmd_qtable(args: argparse.Namespace) -> int:
    from bdi_rl.readers.qtables import diff, print_library, show

    if args.qtable_command == "list":
        _check_runs(args.runs, must_exist=True)
        print_library(args.runs)
    elif args.qtable_command == "show":
        show(args.file)
    elif args.qtable_command == "diff":
        diff(args.a, args.b, top=args.top)
    elif args.qtable_command == "export":
        from bdi_rl.rl.exchange import export_tables

        if not args.file.parent.is_dir():
            raise BadInput(f"FILE {args.file}: no such directory {args.file.parent}")
        print(export_tables(args.source, args.file))
    else:
        from bdi_rl.rl.exchange import import_tables

        _check_runs(args.runs)
        print(import_tables(args.file, args.runs))
    return EXIT_OK


def cmd_play(args: argparse.Namespace) -> int:
    """Greedy episodes of a trained table as an evaluation run (``bdi_rl.xmpp.play``)."""
    from bdi_rl.console import print_summary, progress_bar
    from bdi_rl.xmpp.play import PlayRequest, play_policy_only, prepare_play

    _check_runs(args.runs)
    request = PlayRequest(
        args.source, args.agent, args.episodes, args.seed, dict(args.env), args.goal, args.policy_only
    )
    prepared = prepare_play(request)  # every check, before anything is written
    args.runs.mkdir(parents=True, exist_ok=True)
    on_run_dir: Callable[[Path], None] | None = None
    if args.announce_run_dir:  # bdi-rl serve's play jobs learn their run id so
        from bdi_rl.control.jobs import announce_run_dir

        on_run_dir = announce_run_dir
    with progress_bar(enabled=not args.no_progress) as on_progress:
        if args.policy_only:
            result = play_policy_only(prepared, args.runs, on_progress, on_run_dir)
        else:
            from bdi_rl.xmpp.runner import run_experiment
            from bdi_rl.xmpp.runtime import event_loop

            result = _until_signalled(
                event_loop(),
                run_experiment(prepared.spec, args.runs, on_progress, setups=prepared.setups, on_run_dir=on_run_dir),
            )
    print_summary(result.summary)
    print(result.run_dir, flush=True)
    if result.summary.get("interrupted"):
        print(f"bdi-rl: interrupted; the episodes played so far are in {result.run_dir}", file=sys.stderr)
        return 130
    _print_failures(result.failures)
    return EXIT_FAILED if result.failures else EXIT_OK


#: Exceptions that mean bad input (one line, exit status 2), by module and name: the boundary
#: imports none of them (importing SPADE, the AgentSpeak runtime and gymnasium just to name their errors
#: cost ~0.8 s on every command); a class whose module was never imported was never raised.
USER_ERRORS = (
    ("bdi_rl.spec", "SpecError"),
    ("bdi_rl.bdi.mind", "AslError"),
    ("bdi_rl.rl.envs", "EnvError"),
    ("bdi_rl.readers.inspector", "InspectError"),
    ("bdi_rl.readers.plots", "PlotError"),
    ("bdi_rl.readers.export", "ExportError"),
    ("bdi_rl.readers.dashboard", "DashboardError"),
    ("bdi_rl.rl.checkpoint", "CheckpointError"),
    ("bdi_rl.rl.exchange", "ExchangeError"),
    ("bdi_rl.xmpp.play", "PlayError"),
    ("bdi_rl.rl.policyfile", "PolicyFileError"),
    ("bdi_rl.readers.qgrid", "QGridError"),
    ("bdi_rl.readers.world", "WorldError"),
    ("bdi_rl.store", "RunsDirError"),
    ("bdi_rl.store", "RunBusyError"),
    ("bdi_rl.trace.errors", "TraceFormatError"),
    ("bdi_rl.xmpp.server", "XmppServerError"),
    ("spade.agent", "AuthenticationFailure"),
)


def _is_a(exc: BaseException, module: str, name: str) -> bool:
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(exc, getattr(loaded, name))


def _is_user_error(exc: BaseException) -> bool:
    return isinstance(exc, BadInput) or any(_is_a(exc, module, name) for module, name in USER_ERRORS)


def _short_path(name: object, limit: int = 120) -> str:
    text = str(name)
    return text if len(text) <= limit else text[: limit // 2] + "..." + text[-limit // 2 :]


def _say_user_error(exc: BaseException) -> str:
    if _is_a(exc, "spade.agent", "AuthenticationFailure"):
        return (
            "the XMPP server refused the agents' login: wrong password for an existing "
            "account ($BDI_RL_XMPP_PASSWORD or --password-file), or registration is not allowed"
        )
    if _is_a(exc, "bdi_rl.readers.runindex", "DamagedTrace"):  # a reader's refusal
        return f"{exc} (--skip-damaged reads around damaged lines)"
    return " ".join(str(exc).split()) or type(exc).__name__


#: A file system that takes no more: a failure of the machine, not bad input.
_DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})

#: The commands that run agents: they patch the libraries first; the readers never import them.
AGENT_COMMANDS = frozenset({"run", "agent", "telemetry", "play"})


def main(argv: Sequence[str] | None = None) -> int:
    """The error boundary: whatever happens, one line on stderr and an exit status."""
    _terminate_like_interrupt()
    args = _parser().parse_args(argv)
    _quiet_libraries()
    from bdi_rl.crashlog import note_run_dir, one_line, write_crash_log

    commands = {
        "run": cmd_run,
        "agent": cmd_agent,
        "telemetry": cmd_telemetry,
        "view": cmd_view,
        "serve": cmd_serve,
        "inspect": cmd_inspect,
        "search": cmd_search,
        "plot": cmd_plot,
        "render": cmd_render,
        "export": cmd_export,
        "dashboard": cmd_dashboard,
        "qtable": cmd_qtable,
        "play": cmd_play,
    }
    note_run_dir(None)
    try:
        if args.command in AGENT_COMMANDS:  # libraries already quieted above
            _patch_libraries()
            # What a run holds is written by the time the interpreter exits; its teardown would
            # then only collect the garbage of a large heap, 4-6 s of CPU for a team agent
            # (measured): past compose's grace period when several containers stop at once.
            atexit.unregister(gc.freeze)
            atexit.register(gc.freeze)
        return commands[args.command](args)
    except TimeoutError as exc:  # a role process waited for a peer that never answered
        print(f"bdi-rl: error: {exc or 'timed out waiting for the telemetry agent'}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("bdi-rl: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the boundary: every exception ends here
        if _is_user_error(exc):
            print(f"bdi-rl: error: {_say_user_error(exc)}", file=sys.stderr)
            return EXIT_BAD_INPUT
        if isinstance(exc, OSError) and exc.errno in _DISK_FULL:  # not the user's input: the machine's
            print(f"bdi-rl: error: {_short_path(exc.filename)}: {exc.strerror}", file=sys.stderr)
            return EXIT_FAILED
        if isinstance(exc, OSError) and exc.filename is not None:
            # a path the user gave that cannot be read, written or created (too long, a
            # directory, under /proc ...)
            print(f"bdi-rl: error: {_short_path(exc.filename)}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        where = write_crash_log(exc)  # a bug or a broken environment
        print(f"bdi-rl: error: {args.command} failed: {one_line(exc)} (traceback in {where})", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
