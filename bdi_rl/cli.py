"""The ``bdi-rl`` command line.

Bad input (spec, plan library, env) is one line on stderr and exit status 2, never a
traceback, and it is found before anything is written under ``runs/``.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Sequence

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class BadInput(Exception):
    """Any user error: reported as one line, exit status 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bdi-rl",
        description="BDI (AgentSpeak) agents that learn with tabular Q-learning over XMPP.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser("run", help="run an experiment on one machine (embedded XMPP server)")
    run.add_argument("spec", help="experiment spec (.toml), or the name of a shipped one")
    run.add_argument("--episodes", type=int, help="training episodes per learner")
    run.add_argument("--seed", type=int, help="base seed")
    run.add_argument("--trace", choices=["episode", "step", "cycle"], help="trace level")
    run.add_argument("--runs", type=Path, default=Path("runs"), help="runs directory (default: runs)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def _quiet_libraries() -> None:
    """SPADE, slixmpp and pyjabber chatter at INFO; users want the bar and the summary."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="ERROR")


def cmd_run(args: argparse.Namespace) -> int:
    from bdi_rl.console import print_summary, progress_bar
    from bdi_rl.runner import run_experiment
    from bdi_rl.spec import load_spec, resolve_spec_path

    spec = load_spec(resolve_spec_path(args.spec),
                     {"episodes": args.episodes, "seed": args.seed, "trace": args.trace})
    from spade.container import Container

    loop = Container().loop
    with progress_bar(enabled=not args.no_progress) as on_progress:
        result = loop.run_until_complete(run_experiment(spec, args.runs, on_progress))
    print_summary(result.summary)
    for agent, reason in result.failures.items():
        print(f"bdi-rl: agent {agent} failed: {reason}", file=sys.stderr)
    print(result.run_dir)
    return EXIT_FAILED if result.failures else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _quiet_libraries()
    from bdi_rl.envs import EnvError
    from bdi_rl.mind import AslError
    from bdi_rl.spec import SpecError

    try:
        return {"run": cmd_run}[args.command](args)
    except (SpecError, AslError, EnvError, BadInput) as exc:
        print(f"bdi-rl: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("bdi-rl: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
