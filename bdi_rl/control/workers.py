"""A job queue whose runs share their processes: ``max_running`` long-lived ``bdi-rl
sweep-worker`` processes (:mod:`bdi_rl.cli.worker`), each handed one run at a time, so a sweep
of short runs pays an interpreter's start and imports once per worker, not once per run.

Jobs, states, the sweep record's updates and Stop are :class:`~bdi_rl.control.jobs.JobQueue`'s;
only where a job runs differs. A worker that dies (killed, out of memory) takes only the run
in hand with it, which fails with what the worker last said; a new worker takes the next.
Stopping a running job stops its worker (SIGINT: the run saves what it learned), and a new
worker serves the rest. A job a worker does not make (``bdi-rl play``, of ``bdi-rl serve``)
runs in a child of its own, as :class:`JobQueue` runs every job, within the same
``max_running``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bdi_rl.control.jobs import (
    ANNOUNCE,
    EXIT_INTERRUPTED,
    FAILED,
    FINISHED,
    RUNNING,
    STOPPED,
    Job,
    JobQueue,
    keep_last_line,
    kill_process,
    read_lines,
)

#: What a worker prints before each run's result (``bdi_rl.cli.worker``).
WORKER_RESULT = "bdi-rl run-result: "


@dataclass(eq=False)  # a worker is itself: kept in a set
class _Worker:
    proc: asyncio.subprocess.Process
    job: Job | None = None
    last_error: list[str] = field(default_factory=list)
    retiring: bool = False
    """it said its last run was its last (``cli.worker.RUNS_PER_WORKER``): given no more"""


def _worker_makes(job: Job) -> bool:
    """A run of a spec, or the resume of a run: what ``bdi-rl sweep-worker`` makes."""
    return job.kind == "run" or (job.kind == "resume" and job.run is not None)


class WorkerQueue(JobQueue):
    """:class:`JobQueue` with its runs in ``max_running`` shared worker processes."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._workers: set[_Worker] = set()
        self._starting = 0
        self._children: dict[int, Job] = {}
        """jobs running in a child of their own (a worker does not make them), by id"""

    def _schedule(self) -> None:
        while self._pending and not self._closed and self._busy() < self.max_running:
            job = self._pending.popleft()
            if not _worker_makes(job):
                self._start_child(job)
                continue
            idle = next((w for w in self._workers if w.job is None and not w.retiring), None)
            if idle is not None:
                self._dispatch(idle, job)
                continue
            # running from now, as JobQueue's job is before its child exists: a worker starts for it
            job.state, job.started = RUNNING, time.time()
            self._starting += 1
            task = asyncio.get_running_loop().create_task(self._start_worker(job))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _busy(self) -> int:
        """Processes making a job now: workers with a run in hand or starting for one, children."""
        return sum(w.job is not None for w in self._workers) + self._starting + len(self._children)

    def _start_child(self, job: Job) -> None:
        job.state, job.started = RUNNING, time.time()
        self._children[job.id] = job
        task = asyncio.get_running_loop().create_task(self._run_child(job))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_child(self, job: Job) -> None:
        try:
            await self._run(job)
        finally:
            del self._children[job.id]
            self._schedule()

    def _dispatch(self, worker: _Worker, job: Job) -> None:
        job.state, job.proc = RUNNING, worker.proc
        job.started = job.started or time.time()
        worker.job = job
        request: dict[str, Any] = (
            {"resume": str(self.runs / job.run)}
            if job.kind == "resume" and job.run is not None
            else {
                "spec": str(job.spec_path),
                "seed": job.seed,
                "episodes": job.episodes,
                "trace": job.trace,
                "settings": job.settings,
                "runs": str(self.runs),
            }
        )
        assert worker.proc.stdin is not None
        worker.proc.stdin.write((json.dumps(request) + "\n").encode())

    async def _start_worker(self, job: Job) -> None:
        """A new worker, its first run ``job`` (already running in the queue's eyes)."""
        try:
            try:
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-P", "-m", "bdi_rl", "sweep-worker",
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,  # a Ctrl-C in the terminal is for the sweep; it stops them
                )  # fmt: skip
            except OSError as exc:
                self._finish(job, "failed", f"cannot start a worker: {exc.strerror or exc}", None)
                return
        finally:
            self._starting -= 1
        worker = _Worker(proc)
        self._workers.add(worker)
        try:
            if job.stop_requested:  # stopped while its worker started: it never began
                job.state, job.ended = STOPPED, time.time()
                self._update_sweep(job, lambda sweep, k: sweep.cancelled.append(k))
            else:
                self._dispatch(worker, job)
            if self._closed and worker.job is None and proc.stdin is not None:
                proc.stdin.close()  # serve or the sweep stops: no more work for it
            self._schedule()
            assert proc.stdout is not None and proc.stderr is not None
            await asyncio.gather(self._read(worker, proc.stdout), keep_last_line(proc.stderr, worker.last_error))
            code = await proc.wait()
        except BaseException:
            kill_process(proc)  # never an orphan waiting on its stdin
            raise
        finally:
            self._workers.discard(worker)
        lost = worker.job
        if lost is not None:  # it died with a run in hand
            worker.job = None
            interrupted = lost.stop_requested or code in (EXIT_INTERRUPTED, -signal.SIGINT)
            said = (worker.last_error[0] if worker.last_error else "") or f"its worker exited with status {code}"
            self._finish(lost, "stopped" if interrupted else "failed", said, code)
        self._schedule()

    async def _read(self, worker: _Worker, stream: asyncio.StreamReader) -> None:
        async for line in read_lines(stream):
            job = worker.job
            if job is None:
                continue
            if job.run is None and line.startswith(ANNOUNCE):
                self._run_started(job, Path(line[len(ANNOUNCE) :].strip()))
            elif line.startswith(WORKER_RESULT):
                try:
                    result = json.loads(line[len(WORKER_RESULT) :])
                except ValueError:
                    result = {"status": "failed", "error": "an unreadable result"}
                worker.job = None
                # a stopped run ends its worker (SIGINT): it is given no other
                worker.retiring = bool(result.get("retiring")) or job.stop_requested
                code = result.get("exit_code")
                self._finish(job, str(result.get("status")), result.get("error"), code if type(code) is int else None)
                self._schedule()

    def _finish(self, job: Job, status: str, error: str | None, exit_code: int | None) -> None:
        """``exit_code``: what ``bdi-rl run`` would have exited with (its worker's, if it died)."""
        job.ended, job.proc, job.exit_code = time.time(), None, exit_code
        if status == "finished":
            job.state = FINISHED
        elif status == "stopped" or job.stop_requested:
            job.state = STOPPED
        else:
            job.state, job.error = FAILED, error or "failed"
            self._update_sweep(job, lambda sweep, k: sweep.failed.append(k))

    async def shutdown(self) -> None:
        """Queued jobs cancelled, running ones stopped (their workers with them), idle
        workers told there is no more work; returns when every worker and child has exited."""
        self._closed = True
        for job in list(self._pending):
            self.stop(job.id)
        for job in [job for job in self.jobs.values() if job.state == RUNNING]:
            self.stop(job.id)  # in a worker, in a child, or with its worker starting
        for worker in list(self._workers):
            if worker.job is None and worker.proc.stdin is not None:
                with contextlib.suppress(OSError):
                    worker.proc.stdin.close()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=self.grace + 5)
        for worker in list(self._workers):
            kill_process(worker.proc)
