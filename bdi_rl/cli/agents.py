"""The commands that run agents: ``run`` (one machine), ``agent`` and ``telemetry`` (a role
each, over a shared XMPP server), ``play`` (a trained table's greedy episodes)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bdi_rl.cli.checks import cannot_listen, check_ready_file, check_runs
from bdi_rl.cli.errors import EXIT_FAILED, EXIT_OK, BadInput
from bdi_rl.cli.process import stop_asked, until_signalled


def _spec_to_resume(args: argparse.Namespace) -> tuple[Any, Any]:
    """The resolved spec of the run ``--resume`` continues (:func:`resumable_run`), once the
    arguments say nothing the run's spec does not."""
    from bdi_rl.store import SPEC_FILE

    run_dir: Path = args.resume
    given = (
        (["the spec"] if args.spec is not None else [])
        + [
            f"--{name.replace('_', '-')}"
            for name in ("episodes", "seed", "trace", "warm_start")
            if getattr(args, name) is not None
        ]
        + (["--set"] if args.set else [])
    )
    if given:
        raise BadInput(f"--resume continues the run as its {SPEC_FILE} says: drop {', '.join(given)}")
    return resumable_run(run_dir)


def resumable_run(run_dir: Path) -> tuple[Any, Any]:
    """The spec of a run to continue, which must not have finished, and its writer lock, held
    from here on (a second writer is refused before it reads): ``run --resume``'s, and a
    continued sweep's."""
    import json

    from bdi_rl.spec import load_spec
    from bdi_rl.store import SPEC_FILE, SUMMARY_FILE, TRACE_FILE, WRITER_FILE, RunWriter

    if not (run_dir / SPEC_FILE).is_file():
        raise BadInput(f"--resume {run_dir}: not a run directory (no {SPEC_FILE})")
    made_as_a_run = (run_dir / WRITER_FILE).is_file()  # (a run's first file, before its spec)
    writer = RunWriter.acquire(run_dir, "bdi-rl run --resume")
    try:
        try:
            summary = json.loads((run_dir / SUMMARY_FILE).read_text())
        except (OSError, ValueError):
            summary = None  # killed: no summary yet
        if isinstance(summary, dict) and not summary.get("interrupted"):
            raise BadInput(f"--resume {run_dir}: the run finished; nothing to resume")
        # stopped, or killed, before it traced anything: it starts here (a sweep's worker
        # killed while its next run started up leaves such a run to resume)
        stopped_in_startup = isinstance(summary, dict) and not summary.get("agents")
        killed_in_startup = summary is None and made_as_a_run
        if not (run_dir / TRACE_FILE).is_file() and not (stopped_in_startup or killed_in_startup):
            raise BadInput(f"--resume {run_dir}: not a run directory (no {TRACE_FILE})")
        spec = load_spec(run_dir / SPEC_FILE)
        if spec.play is not None:
            raise BadInput(f"--resume {run_dir}: an evaluation (bdi-rl play) is not resumed: play the table again")
        return spec, writer
    except BaseException:
        writer.release()
        raise


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
        from bdi_rl.settings import parse_setting

        settings = dict(parse_setting(text) for text in args.set)
        spec = load_spec(
            resolve_spec_path(args.spec), {"episodes": args.episodes, "seed": args.seed, "trace": args.trace}, settings
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
        check_runs(args.runs)
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
        result = until_signalled(
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
        raise BadInput(cannot_listen("viewer", host, port, exc)) from None
    print(f"bdi-rl viewer: {url_of(host, port)}", file=sys.stderr, flush=True)
    return viewer


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
    check_runs(args.runs)
    every_setup = checked_setups(spec)  # before a claim takes a name from telemetry
    from bdi_rl.xmpp.runtime import event_loop

    loop = event_loop()
    names = args.name
    if args.claim:
        names = [until_signalled(loop, claim_name(args.claim, spec, domain, port, password, args.join_timeout))]
    failures = until_signalled(
        loop, run_agents(spec, names, args.runs, domain, port, password, args.join_timeout, every_setup)
    )
    _print_failures(failures)
    if any(reason == "interrupted" for reason in failures.values()):
        return 130
    return EXIT_FAILED if failures else EXIT_OK


def cmd_telemetry(args: argparse.Namespace) -> int:
    from bdi_rl.spec import load_spec, resolve_spec_path
    from bdi_rl.xmpp.roles import existing_run, read_password, serve_telemetry

    spec = load_spec(resolve_spec_path(args.spec))
    domain, port = _xmpp_address(args.xmpp, args.domain)
    password = read_password(args.password_file)
    check_runs(args.runs)
    check_ready_file(args.ready_file)
    # the run it continues is checked and locked before the viewer's URL is printed
    resume = existing_run(args.run, spec) if args.run is not None else None
    from bdi_rl.xmpp.runtime import event_loop

    loop = event_loop()
    viewer = None
    if args.view is not None:
        view_host, view_port = args.view
        viewer = _start_viewer(loop, args.runs, view_host, view_port, args.allow_host)
    result = until_signalled(
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


def cmd_play(args: argparse.Namespace) -> int:
    """Greedy episodes of a trained table as an evaluation run (``bdi_rl.xmpp.play``)."""
    from bdi_rl.console import print_summary, progress_bar
    from bdi_rl.xmpp.play import PlayRequest, play_policy_only, prepare_play

    check_runs(args.runs)
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
            with stop_asked() as stopping:
                result = play_policy_only(prepared, args.runs, stopping, on_progress, on_run_dir)
        else:
            from bdi_rl.xmpp.runner import run_experiment
            from bdi_rl.xmpp.runtime import event_loop

            result = until_signalled(
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
