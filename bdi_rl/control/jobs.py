"""The job queue of ``bdi-rl serve`` and ``bdi-rl sweep``: at most N jobs at once, the rest
FIFO; here each a ``bdi-rl run`` child (``--process-per-run``; by default their runs go to
shared worker processes instead, :mod:`bdi_rl.control.workers`).

Each job is ``python -m bdi_rl run SPEC --runs RUNS --seed S ... --no-progress
--announce-run-dir`` (or ``run --resume RUN_DIR``, or ``play RUN_DIR --agent A ...``): the same
code path as from the terminal, so its run directory is an ordinary one. The child prints
:data:`ANNOUNCE` and its run directory on stdout as soon as the directory exists
(:func:`announce_run_dir`), which is how a job learns its run id (and a sweep record its
``runs[k]``) while the run is still going. Stopping a running job is Ctrl-C
for it (SIGINT: learners stop, tables and summary saved, exit 130), SIGKILL only after a grace
period. Children run in their own session, so a Ctrl-C in serve's terminal reaches serve
alone, which then stops them the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import signal
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bdi_rl.settings import toml_literal
from bdi_rl.store import Sweep, write_sweep

#: What ``bdi-rl run --announce-run-dir`` prints before the run directory's path.
ANNOUNCE = "bdi-rl run-dir: "

QUEUED, RUNNING, FINISHED, FAILED, STOPPED = "queued", "running", "finished", "failed", "stopped"
#: Exit status of a run stopped by SIGINT (``bdi-rl run`` saved what it had learned).
EXIT_INTERRUPTED = 130
#: Longest stderr line kept for a failed job.
MAX_ERROR = 500


def announce_run_dir(run_dir: Path) -> None:
    """The child's side (``bdi-rl run --announce-run-dir``): say where the run is, at once."""
    print(f"{ANNOUNCE}{run_dir.resolve()}", flush=True)


@dataclass
class Job:
    """One run to make: what it runs, and where it has got."""

    id: int
    spec: str
    """what the page shows: a shipped spec's name, the experiment of an uploaded one, or
    what a resume or a play does"""
    spec_path: Path | None
    seed: int | None
    episodes: int | None = None
    trace: str | None = None
    sweep: str | None = None
    sweep_index: int | None = None
    state: str = QUEUED
    run: str | None = None
    exit_code: int | None = None
    error: str | None = None
    created: float = field(default_factory=time.time)
    started: float | None = None
    ended: float | None = None
    proc: asyncio.subprocess.Process | None = field(default=None, repr=False)
    stop_requested: bool = False
    kind: str = "run"
    """``run`` (a spec), ``resume`` (``run --resume``) or ``play`` (``bdi-rl play``)"""
    args: list[str] = field(default_factory=list)
    """a resume's or a play's ``bdi-rl`` arguments (a run's come from the fields above)"""
    settings: dict[str, Any] = field(default_factory=dict)
    """spec settings by path (``bdi-rl run --set``): a sweep configuration's"""

    def to_json(self) -> dict[str, Any]:
        keys = ("id", "kind", "spec", "seed", "episodes", "trace", "sweep", "state", "run", "exit_code", "error")
        return {k: getattr(self, k) for k in keys} | {
            "created": self.created,
            "started": self.started,
            "ended": self.ended,
            "stopping": self.stop_requested and self.state == RUNNING,
        }


class JobQueue:
    """Jobs in submission order; ``max_running`` children at once (everything runs on one
    event loop: no locks)."""

    def __init__(self, runs: Path, max_running: int, grace: float = 15.0) -> None:
        self.runs = runs.resolve()
        self.max_running = max_running
        self.grace = grace
        self.jobs: dict[int, Job] = {}
        self.sweeps: dict[str, Sweep] = {}
        self._pending: deque[Job] = deque()
        self._tasks: set[asyncio.Task[None]] = set()
        self._ids = itertools.count(1)
        self._closed = False

    def new_job(self, spec: str, spec_path: Path, seed: int, **kwargs: Any) -> Job:
        return Job(next(self._ids), spec, spec_path, seed, **kwargs)

    def new_task(self, label: str, kind: str, args: list[str], seed: int | None = None, **kwargs: Any) -> Job:
        """A resume or a play: ``bdi-rl ARGS`` in a child, as a run is."""
        return Job(next(self._ids), label, None, seed, kind=kind, args=args, **kwargs)

    def active_for(self, run: str) -> Job | None:
        """A queued or running job of this server that writes the run ``run`` (a resume)."""
        return next((j for j in self.jobs.values() if j.run == run and j.state in (QUEUED, RUNNING)), None)

    def submit(self, jobs: list[Job], sweep: Sweep | None = None) -> None:
        """Queue ``jobs`` (a sweep's record is already written) and start what may start."""
        if sweep is not None:
            self.sweeps[sweep.id] = sweep
        for job in jobs:
            self.jobs[job.id] = job
            self._pending.append(job)
        self._schedule()

    def running(self) -> int:
        return sum(job.state == RUNNING for job in self.jobs.values())

    def queued(self) -> int:
        return len(self._pending)

    def _schedule(self) -> None:
        while self._pending and not self._closed and self.running() < self.max_running:
            job = self._pending.popleft()
            job.state, job.started = RUNNING, time.time()
            task = asyncio.get_running_loop().create_task(self._run(job))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def command(self, job: Job) -> list[str]:
        """``bdi-rl run`` (or the resume's or play's command) as the terminal would run it,
        plus the announcement of its run dir."""
        # -P: the installed bdi_rl, never a ``bdi_rl`` directory that happens to be in serve's
        # working directory (``python -m`` would put it first, as the console script does not)
        tail = ["--no-progress", "--announce-run-dir"]
        if job.kind != "run":
            return [sys.executable, "-P", "-m", "bdi_rl", *job.args, *tail]
        cmd = [sys.executable, "-P", "-m", "bdi_rl", "run", str(job.spec_path), "--runs", str(self.runs)]
        cmd += ["--seed", str(job.seed)]
        if job.episodes is not None:
            cmd += ["--episodes", str(job.episodes)]
        if job.trace is not None:
            cmd += ["--trace", job.trace]
        for path, value in job.settings.items():
            cmd += ["--set", f"{path}={toml_literal(value)}"]
        return [*cmd, "--no-progress", "--announce-run-dir"]

    async def _run(self, job: Job) -> None:
        try:
            try:
                proc = await asyncio.create_subprocess_exec(
                    *self.command(job),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,  # serve's Ctrl-C is for serve; it stops children itself
                )
            except OSError as exc:
                job.state, job.error, job.ended = FAILED, f"cannot start: {exc.strerror or exc}", time.time()
                return
            job.proc = proc
            if job.stop_requested:  # stopped while it was being started
                self._interrupt(job)
            assert proc.stdout is not None and proc.stderr is not None
            last_error: list[str] = []
            await asyncio.gather(self._watch_stdout(job, proc.stdout), keep_last_line(proc.stderr, last_error))
            job.exit_code = await proc.wait()
            job.ended = time.time()
            if job.exit_code == 0:
                job.state = FINISHED
            elif job.stop_requested or job.exit_code in (EXIT_INTERRUPTED, -signal.SIGINT):
                job.state = STOPPED
            else:
                job.state = FAILED
                job.error = (last_error[0] if last_error else "") or f"exit status {job.exit_code}"
                self._update_sweep(job, lambda sweep, k: sweep.failed.append(k))
        finally:
            self._schedule()

    async def _watch_stdout(self, job: Job, stream: asyncio.StreamReader) -> None:
        """Read the child's stdout to its end; the announcement names the run."""
        async for line in read_lines(stream):
            if job.run is None and line.startswith(ANNOUNCE):
                self._run_started(job, Path(line[len(ANNOUNCE) :].strip()))

    def _run_started(self, job: Job, run_dir: Path) -> None:
        if run_dir.parent != self.runs:  # never: the child was told --runs
            return
        job.run = run_dir.name
        self._update_sweep(job, lambda sweep, k: sweep.runs.__setitem__(k, job.run))

    def _update_sweep(self, job: Job, change: Any) -> None:
        """Apply ``change(sweep, index)`` to the job's sweep record and save it."""
        sweep = self.sweeps.get(job.sweep or "")
        if sweep is not None and job.sweep_index is not None:
            change(sweep, job.sweep_index)
            try:
                write_sweep(self.runs, sweep)
            except OSError as exc:
                print(f"bdi-rl serve: cannot update sweep {sweep.id}: {exc.strerror}", file=sys.stderr)

    def stop(self, job_id: int) -> Job:
        """Cancel a queued job, interrupt a running one (KeyError: no such job)."""
        job = self.jobs[job_id]
        if job.state == QUEUED:
            self._pending.remove(job)
            job.state, job.ended = STOPPED, time.time()
            self._update_sweep(job, lambda sweep, k: sweep.cancelled.append(k))
        elif job.state == RUNNING and not job.stop_requested:
            job.stop_requested = True
            if job.proc is not None:
                self._interrupt(job)
        return job

    def _interrupt(self, job: Job) -> None:
        """SIGINT now (``bdi-rl run`` saves what it learned), SIGKILL after the grace period."""
        proc = job.proc
        if proc is None or proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGINT)
        asyncio.get_running_loop().call_later(self.grace, kill_process, proc)

    async def shutdown(self) -> None:
        """serve stops: queued jobs are cancelled, running ones stopped as Stop does; returns
        when every child has exited (killed after the grace period if need be)."""
        self._closed = True
        for job in list(self._pending):
            self.stop(job.id)
        for job in self.jobs.values():
            if job.state == RUNNING:
                self.stop(job.id)
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=self.grace + 5)


def kill_process(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


async def read_lines(stream: asyncio.StreamReader, most: int = 65536) -> Any:
    """Lines of ``stream`` as text, to its end; a line longer than ``most`` bytes is cut
    (a child's output must never stall or break the reader)."""
    buffer = b""
    while chunk := await stream.read(most):
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            yield line[:most].decode("utf-8", "replace")
        buffer = buffer[-most:]
    if buffer:
        yield buffer.decode("utf-8", "replace")


async def keep_last_line(stream: asyncio.StreamReader, into: list[str]) -> None:
    """Read ``stream`` to its end, keeping its last non-empty line in ``into[0]``."""
    async for line in read_lines(stream):
        if line.strip():
            into[:] = [line.strip()[:MAX_ERROR]]
