"""The commands that read run directories (``view``, ``serve``, ``inspect``, ``search``,
``render``, ``plot``, ``export``, ``dashboard``, ``qtable``): none of them imports agent code."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from bdi_rl.cli.checks import cannot_listen, check_runs
from bdi_rl.cli.errors import EXIT_OK, BadInput


def _on_damage(args: argparse.Namespace) -> Callable[[str], None] | None:
    """``--skip-damaged``: read around damaged trace lines, saying so on stderr; else None:
    a damaged trace is refused (one line naming ``trace.jsonl:LINE``, exit status 2)."""
    return _warn if args.skip_damaged else None


def _warn(notice: str) -> None:
    print(f"bdi-rl: warning: {notice}", file=sys.stderr, flush=True)


def cmd_view(args: argparse.Namespace) -> int:
    from bdi_rl.readers.viewer import serve

    check_runs(args.runs, must_exist=True)
    try:  # prints its URL once it listens: never one that is someone else's server
        serve(args.runs, args.host, args.port, args.allow_host)
    except OSError as exc:
        raise BadInput(cannot_listen("--host/--port", args.host, args.port, exc)) from None
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    import os

    from bdi_rl.control.app import serve

    check_runs(args.runs)
    args.runs.mkdir(parents=True, exist_ok=True)
    try:
        jobs = args.jobs or os.cpu_count() or 1
        serve(args.runs, args.host, args.port, jobs, args.allow_host, args.process_per_run)
    except OSError as exc:
        raise BadInput(cannot_listen("--host/--port", args.host, args.port, exc)) from None
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
        check_runs(args.runs, must_exist=True)
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

        check_runs(args.runs)
        print(import_tables(args.file, args.runs))
    return EXIT_OK
