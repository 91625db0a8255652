"""A sweep's runs on a Dask distributed cluster (``bdi-rl sweep FILE --cluster ADDRESS``).

Each run is one Dask task (:func:`run_on_worker`): on whichever worker the scheduler picks, it
runs the run in a ``bdi-rl sweep-worker`` child (:mod:`bdi_rl.cli.worker`) and writes its
run directory under ``runs/``, which every worker and this process must see at the same path
(shared storage, as on any cluster). Dask's own scheduling does the rest: at most one run
per worker thread, and a task whose worker dies is run again on another (``retries``).

A run is claimed as soon as its directory exists: ``runs/.sweeps/<sweep>/<k>.run`` names it.
A task that finds its run claimed (its first worker died) resumes that run from its latest
checkpoints (``run --resume``: each agent's trace goes on gapless, no event twice), or
reports it finished if it did: a worker that dies takes no run with it, and none runs twice.
Its child dies with the worker (Linux: ``PR_SET_PDEATHSIG``), so a killed worker leaves no
writer behind.

The same code reaches Slurm, PBS, SGE, LSF and HTCondor through ``dask-jobqueue`` and
Kubernetes through ``dask-kubernetes``: they start the scheduler and workers, this connects
to the scheduler's address (README, "Sweeps on a cluster").
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bdi_rl.control.jobs import ANNOUNCE, FAILED, FINISHED, RUNNING, STOPPED, Job, JobQueue
from bdi_rl.control.workers import WORKER_RESULT
from bdi_rl.store import SUMMARY_FILE, SWEEPS_DIR, atomic_write_bytes

#: Times Dask runs a task again after its worker died.
RETRIES = 3
#: Seconds between two looks at the runs' claims (the record follows the runs live).
CLAIM_POLL_SECONDS = 1.0
_PR_SET_PDEATHSIG = 1


class ClusterError(RuntimeError):
    """The cluster cannot be used: the message is meant for the user."""


def claim_file(runs: Path, sweep: str, index: int) -> Path:
    return runs / SWEEPS_DIR / sweep / f"{index}.run"


def _die_with_parent() -> None:
    """In the child, before exec: killed when the worker that started it dies (Linux)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass  # not Linux: a killed worker's run goes on alone, and is resumed once it stops


def _finished(run_dir: Path) -> bool:
    try:
        summary = json.loads((run_dir / SUMMARY_FILE).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(summary, dict) and not summary.get("interrupted")


def run_on_worker(request: dict[str, Any]) -> dict[str, Any]:
    """One run of a sweep, on a Dask worker: a new one, or the claimed one resumed."""
    runs = Path(request["runs"])
    claim = Path(request["claim"])
    if claim.is_file():
        run = claim.read_text().strip()
        if _finished(runs / run):
            return {"status": "finished", "error": None, "run": run}
        asked: dict[str, Any] = {"resume": str(runs / run)}
    else:
        run = None
        asked = {k: request[k] for k in ("spec", "seed", "settings", "runs")}
    child = subprocess.Popen(
        [sys.executable, "-m", "bdi_rl", "sweep-worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_die_with_parent,
    )
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    child.stdin.write(json.dumps(asked) + "\n")
    child.stdin.close()
    result: dict[str, Any] = {"status": "failed", "error": "the run said nothing"}
    for line in child.stdout:
        if line.startswith(ANNOUNCE) and run is None:
            run = Path(line[len(ANNOUNCE) :].strip()).name
            atomic_write_bytes(claim, run.encode())
        elif line.startswith(WORKER_RESULT):
            result = json.loads(line[len(WORKER_RESULT) :])
    errors = [line.strip() for line in child.stderr if line.strip()]
    code = child.wait()
    if result["status"] == "failed" and not result.get("error"):
        result["error"] = errors[-1] if errors else f"exit status {code}"
    return {**result, "run": run}


class ClusterQueue(JobQueue):
    """:class:`JobQueue` whose runs are Dask tasks on the cluster at ``address``."""

    def __init__(self, runs: Path, address: str, grace: float = 15.0) -> None:
        super().__init__(runs, max_running=1 << 30, grace=grace)
        self.address = address
        self._client: Any = None
        self._futures: dict[int, Any] = {}

    async def connect(self, timeout: float = 20.0) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise ClusterError("--cluster needs Dask: pip install 'bdi-rl[cluster]'") from None
        try:
            self._client = await Client(self.address, asynchronous=True, timeout=timeout)  # type: ignore[no-untyped-call]
        except (OSError, TimeoutError, ValueError) as exc:
            raise ClusterError(f"--cluster {self.address}: cannot reach the scheduler: {exc}") from None
        self._tasks.add(asyncio.get_running_loop().create_task(self._follow_claims()))

    def _schedule(self) -> None:
        while self._pending and not self._closed and self._client is not None:
            job = self._pending.popleft()
            job.state, job.started = RUNNING, time.time()
            claim = self._claim(job)
            if job.kind == "resume" and job.run is not None and not claim.is_file():
                atomic_write_bytes(claim, job.run.encode())  # a stopped sweep's run: the task resumes it
            request = {
                "runs": str(self.runs),
                "claim": str(claim),
                "spec": str(job.spec_path),
                "seed": job.seed,
                "settings": job.settings,
            }
            future = self._client.submit(run_on_worker, request, pure=False, retries=RETRIES)
            self._futures[job.id] = future
            task = asyncio.get_running_loop().create_task(self._await(job, future))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _claim(self, job: Job) -> Path:
        index = job.sweep_index if job.sweep_index is not None else job.id
        return claim_file(self.runs, job.sweep or "runs", index)

    async def _await(self, job: Job, future: Any) -> None:
        try:
            result = await future
        except asyncio.CancelledError:
            job.state, job.ended = STOPPED, time.time()
            return
        except Exception as exc:  # noqa: BLE001 - the task's failure is the run's
            result = {"status": "failed", "error": f"{type(exc).__name__}: {exc}", "run": None}
        finally:
            self._futures.pop(job.id, None)
        if result.get("run") and job.run is None:
            self._run_started(job, self.runs / str(result["run"]))
        job.ended = time.time()
        if result.get("status") == "finished":
            job.state, job.exit_code = FINISHED, 0
        else:
            job.state, job.error = FAILED, str(result.get("error") or "failed")
            self._update_sweep(job, lambda sweep, k: sweep.failed.append(k))

    async def _follow_claims(self) -> None:
        """The record names each run as soon as its directory exists (the viewer follows it)."""
        while not self._closed:
            for job in self.jobs.values():
                if job.run is None and job.state == RUNNING:
                    claim = self._claim(job)
                    if claim.is_file():
                        self._run_started(job, self.runs / claim.read_text().strip())
            await asyncio.sleep(CLAIM_POLL_SECONDS)

    def stop(self, job_id: int) -> Job:
        """A queued or submitted run is cancelled; one already running on a worker goes on
        there to its end (Dask cannot interrupt a task), and ``--continue`` finds it done."""
        job = self.jobs[job_id]
        future = self._futures.get(job_id)
        if future is not None and not future.done():
            self._client.cancel(future)
        return super().stop(job_id) if job.state != RUNNING else job

    async def shutdown(self) -> None:
        self._closed = True
        for job_id in list(self._futures):
            self.stop(job_id)
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=self.grace + 5)
        if self._client is not None:
            await self._client.close()
