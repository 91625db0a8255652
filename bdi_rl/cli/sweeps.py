"""``bdi-rl sweep FILE``: every run of a sweep file (:mod:`bdi_rl.sweepfile`), checked whole,
then run by ``--workers`` worker processes, each one run after another
(:mod:`bdi_rl.control.workers`, :mod:`bdi_rl.cli.worker`: a short run costs its work, not a
start-up), or with ``--process-per-run`` as ``bdi-rl run`` children (``--set`` per
configuration) by the job queue ``bdi-rl serve`` uses (:mod:`bdi_rl.control.jobs`); a line of
progress (done, running, failed, ETA) while they run, and the sweep's record in
``runs/.sweeps/`` for the readers (the same record a sweep started from the browser has).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bdi_rl.cli.checks import check_runs
from bdi_rl.cli.errors import EXIT_FAILED, EXIT_OK, BadInput, is_user_error, say_user_error

if TYPE_CHECKING:
    from bdi_rl.sweepfile import SweepPlan

#: Seconds between two progress lines when stderr is not a terminal.
_LOG_EVERY = 30.0


def cmd_sweep(args: argparse.Namespace) -> int:
    from bdi_rl.sweepfile import configuration_spec, load_sweep
    from bdi_rl.xmpp.setup import prepare_experiment

    plan = load_sweep(args.file)
    for configuration in plan.configurations:  # envs, plan files, warm starts: as bdi-rl run checks
        try:
            prepare_experiment(configuration_spec(plan, configuration))
        except Exception as exc:
            if not is_user_error(exc):
                raise
            raise BadInput(f"{plan.file}: configuration ({configuration.label()}): {say_user_error(exc)}") from None
    check_runs(args.runs)
    workers = args.workers or max(1, os.cpu_count() or 1)
    runs = plan.runs()
    print(
        f"sweep {plan.name}: {len(plan.configurations)} configuration(s) x {len(plan.seeds)} seed(s) = "
        f"{len(runs)} runs, {workers} at once",
        file=sys.stderr,
    )
    args.runs.mkdir(parents=True, exist_ok=True)
    return asyncio.run(_run_sweep(plan, args.runs, workers, not args.no_progress, not args.process_per_run))


async def _run_sweep(plan: SweepPlan, runs_dir: Path, workers: int, progress: bool, shared: bool) -> int:
    from bdi_rl.control.jobs import FAILED, FINISHED, QUEUED, RUNNING, STOPPED, JobQueue
    from bdi_rl.control.workers import WorkerQueue
    from bdi_rl.store import SWEEPS_DIR, Sweep, new_sweep_id, write_sweep

    queue = WorkerQueue(runs_dir, workers) if shared else JobQueue(runs_dir, workers)
    created = time.time()
    runs = plan.runs()
    sweep = Sweep(
        new_sweep_id(queue.runs, created),
        plan.spec.name,
        [seed for _, seed in runs],
        [None] * len(runs),
        created,
        axes=plan.axes,
        configurations=[c.settings for c in plan.configurations],
        configuration=[k for k, _ in runs],
    )
    write_sweep(queue.runs, sweep)
    jobs = [
        queue.new_job(
            f"{plan.name} ({plan.configurations[k].label()}) seed {seed}",
            plan.spec_path.resolve(),
            seed,
            sweep=sweep.id,
            sweep_index=i,
            settings=plan.configurations[k].settings,
        )
        for i, (k, seed) in enumerate(runs)
    ]
    queue.submit(jobs, sweep)
    began = time.monotonic()
    last_log = 0.0
    terminal = sys.stderr.isatty()
    try:
        while True:
            states = [job.state for job in jobs]
            done, failed = states.count(FINISHED), states.count(FAILED) + states.count(STOPPED)
            running, queued = states.count(RUNNING), states.count(QUEUED)
            finished = done + failed
            elapsed = time.monotonic() - began
            eta = f", ETA {_duration(elapsed / finished * (len(jobs) - finished))}" if finished else ""
            line = f"{sweep.id}: {done}/{len(jobs)} done, {running} running, {failed} failed{eta}"
            if progress and (terminal or elapsed - last_log >= _LOG_EVERY or not running and not queued):
                print(
                    f"\r{line}\033[K" if terminal else line, end="" if terminal else "\n", file=sys.stderr, flush=True
                )
                last_log = elapsed
            if not running and not queued:
                break
            await asyncio.sleep(0.5)
    finally:
        if terminal and progress:
            print(file=sys.stderr)
        await queue.shutdown()
    for job in jobs:
        if job.state == FAILED:
            print(f"bdi-rl sweep: {job.spec}: {job.error}", file=sys.stderr)
    print(runs_dir / SWEEPS_DIR / f"{sweep.id}.json")  # the record, for scripts
    return EXIT_OK if all(job.state == FINISHED for job in jobs) else EXIT_FAILED


def cmd_sweep_report(args: argparse.Namespace) -> int:
    from bdi_rl.readers.sweepreport import csv_text, report, table_text
    from bdi_rl.store import atomic_write_bytes

    if args.csv is not None and not args.csv.parent.is_dir():
        raise BadInput(f"--csv {args.csv}: no such directory {args.csv.parent}")
    sweep, rows = report(args.sweep, args.runs, args.metric, args.threshold, args.window)
    print(table_text(sweep, rows, args.metric, args.threshold, args.window), end="")
    if args.csv is not None:
        atomic_write_bytes(args.csv, csv_text(rows).encode())
        print(f"{args.csv}: {len(rows)} configurations")
    return EXIT_OK


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
