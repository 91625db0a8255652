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
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bdi_rl.cli.checks import check_runs
from bdi_rl.cli.errors import EXIT_FAILED, EXIT_OK, BadInput, is_user_error, say_user_error

if TYPE_CHECKING:
    from bdi_rl.control.jobs import Job, JobQueue
    from bdi_rl.store import Sweep
    from bdi_rl.sweepfile import SweepPlan

#: Seconds between two progress lines when stderr is not a terminal.
_LOG_EVERY = 30.0


def cmd_sweep(args: argparse.Namespace) -> int:
    if args.continue_sweep is not None:
        if args.file is not None:
            raise BadInput("sweep: give a sweep file, or --continue SWEEP, not both")
        return _continue(args)
    if args.file is None:
        raise BadInput("sweep: give a sweep file (or --continue SWEEP to finish a stopped one)")
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
    where = f"on the cluster at {args.cluster}" if args.cluster else f"{workers} at once"
    print(
        f"sweep {plan.name}: {len(plan.configurations)} configuration(s) x {len(plan.seeds)} seed(s) = "
        f"{len(plan.runs())} runs, {where}",
        file=sys.stderr,
    )
    args.runs.mkdir(parents=True, exist_ok=True)
    import asyncio

    return asyncio.run(_new_sweep(plan, args, workers))


async def _queue(args: argparse.Namespace, workers: int) -> JobQueue:
    """Where the runs go: a Dask cluster (``--cluster``), processes of their own
    (``--process-per-run``), or shared worker processes (the default)."""
    from bdi_rl.control.jobs import JobQueue
    from bdi_rl.control.workers import WorkerQueue

    if args.cluster is not None:
        from bdi_rl.control.cluster import ClusterError, ClusterQueue

        queue = ClusterQueue(args.runs, args.cluster)
        try:
            await queue.connect()
        except ClusterError as exc:
            raise BadInput(str(exc)) from None
        return queue
    return JobQueue(args.runs, workers) if args.process_per_run else WorkerQueue(args.runs, workers)


async def _new_sweep(plan: SweepPlan, args: argparse.Namespace, workers: int) -> int:
    from bdi_rl.store import Sweep, new_sweep_id, write_sweep

    queue = await _queue(args, workers)
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
        spec_file=str(plan.spec_path.resolve()),
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
    return await _follow(queue, sweep, jobs, not args.no_progress)


def _continue(args: argparse.Namespace) -> int:
    """Finish a stopped (or killed) sweep: its finished runs stay, its interrupted ones are
    resumed from their checkpoints (``run --resume``: each agent's trace goes on gapless), the
    ones that never started start."""
    from bdi_rl.readers.sweepreport import SweepReportError, find_sweep

    try:
        sweep, runs_dir = find_sweep(args.continue_sweep, args.runs)
    except SweepReportError as exc:
        raise BadInput(f"--continue {exc}") from None
    if sweep.spec_file is None or not Path(sweep.spec_file).is_file():
        raise BadInput(f"--continue {sweep.id}: its spec file is not recorded or gone: start it anew")
    args.runs = runs_dir
    workers = args.workers or max(1, os.cpu_count() or 1)
    import asyncio

    return asyncio.run(_continue_sweep(sweep, args, workers))


async def _continue_sweep(sweep: Sweep, args: argparse.Namespace, workers: int) -> int:
    import json

    from bdi_rl.store import SUMMARY_FILE, write_sweep

    queue = await _queue(args, workers)
    jobs: list[Job] = []
    done = 0
    for k, run in enumerate(sweep.runs):
        settings = sweep.configurations[sweep.configuration[k]] if sweep.configuration else {}
        label = f"{sweep.spec} ({', '.join(f'{p}={v}' for p, v in settings.items())}) seed {sweep.seeds[k]}"
        if run is not None:
            try:
                summary = json.loads((args.runs / run / SUMMARY_FILE).read_text())
            except (OSError, ValueError):
                summary = None  # killed before its summary
            if isinstance(summary, dict) and not summary.get("interrupted"):
                done += 1
                continue
            job = queue.new_task(f"resume {run}", "resume", ["run", "--resume", str(args.runs / run)], run=run)
        else:
            job = queue.new_job(label, Path(str(sweep.spec_file)), sweep.seeds[k], settings=settings)
        job.sweep, job.sweep_index = sweep.id, k
        jobs.append(job)
    sweep.cancelled = []
    sweep.failed = []
    write_sweep(queue.runs, sweep)
    print(f"sweep {sweep.id}: {done} run(s) finished already, {len(jobs)} to go, {workers} at once", file=sys.stderr)
    return await _follow(queue, sweep, jobs, not args.no_progress)


async def _follow(queue: JobQueue, sweep: Sweep, jobs: list[Job], progress: bool) -> int:
    """Run the jobs, saying how far they got; the record's path last, for scripts."""
    import asyncio

    from bdi_rl.control.jobs import FAILED, FINISHED, QUEUED, RUNNING, STOPPED
    from bdi_rl.store import SWEEPS_DIR

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
    except asyncio.CancelledError:  # Ctrl-C: running runs save what they learned, queued ones wait
        await queue.shutdown()
        print(queue.runs / SWEEPS_DIR / f"{sweep.id}.json")
        print(f"bdi-rl: sweep {sweep.id} stopped; finish it with: bdi-rl sweep --continue {sweep.id}", file=sys.stderr)
        raise
    finally:
        if terminal and progress:
            print(file=sys.stderr)
        await queue.shutdown()
    for job in jobs:
        if job.state == FAILED:
            print(f"bdi-rl sweep: {job.spec}: {job.error}", file=sys.stderr)
    print(queue.runs / SWEEPS_DIR / f"{sweep.id}.json")  # the record, for scripts
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
