"""Sweeps on a Dask cluster (issue 30): a real scheduler and two real workers on loopback,
one of them SIGKILLed mid-sweep. Every run of the sweep finishes once, each agent's trace
gapless, nothing counted twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from bdi_rl.store import Sweep
from bdi_rl.trace.reading import read_trace
from bdi_rl.xmpp.serverhost import free_port
from tests.conftest import MINIMAL_SPEC, line_seqs

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return found


@pytest.fixture
def cluster(tmp_path):
    """A Dask scheduler and two single-threaded workers without nannies (a killed worker stays
    dead, as a lost machine does)."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    log = (tmp_path / "dask.log").open("w")
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port),
         "--no-dashboard"], stdout=log, stderr=log,
    )  # fmt: skip
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_worker",
                address,
                "--nthreads",
                "1",
                "--no-nanny",
                "--no-dashboard",
                "--name",
                f"w{k}",
            ],
            stdout=log,
            stderr=log,
        )  # fmt: skip
        for k in range(2)
    ]
    from distributed import Client

    deadline = time.monotonic() + 60
    while True:
        try:
            with Client(address, timeout=5) as client:
                if len(client.scheduler_info()["workers"]) == 2:
                    break
        except OSError:
            pass
        assert time.monotonic() < deadline, (tmp_path / "dask.log").read_text()[-2000:]
        time.sleep(0.5)
    yield address, workers
    for proc in [*workers, scheduler]:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    log.close()


def test_a_worker_killed_mid_sweep_takes_no_run_with_it(cluster, tmp_path: Path) -> None:
    address, workers = cluster
    spec = MINIMAL_SPEC.replace("episodes = 20", 'episodes = 6000\ncheckpoint_every = 300\ntrace = "episode"')
    (tmp_path / "tiny.toml").write_text(spec)
    sweep_file = tmp_path / "sweep.toml"
    sweep_file.write_text('spec = "tiny.toml"\n[axes]\n"learning.alpha" = [0.1, 0.3]\nseed = [1, 2]\n')
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bdi_rl", "sweep", str(sweep_file), "--runs", str(runs), "--cluster", address],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        victim = None
        deadline = time.monotonic() + 120
        while victim is None:  # a worker whose run has kept a checkpoint: killed there
            assert time.monotonic() < deadline and proc.poll() is None, "no run got going"
            for worker in workers:
                children = _children_of(worker.pid)
                running = [d for d in runs.glob("FrozenLake*") if (d / "qtables").is_dir()]
                if children and running:
                    victim = worker
                    break
            time.sleep(0.2)
        victim.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    sweep = msgspec.json.decode(Path(out.strip().splitlines()[-1]).read_bytes(), type=Sweep)
    assert None not in sweep.runs and len(set(sweep.runs)) == 4 and sweep.failed == []
    assert sorted(p.name for p in runs.iterdir() if not p.name.startswith(".")) == sorted(sweep.runs)
    resumed = 0
    for run in sweep.runs:
        summary = json.loads((runs / run / "summary.json").read_text())
        assert not summary.get("interrupted") and summary["agents"]["learner"]["episodes"] == 6000, run
        events = read_trace(runs / run / "trace.jsonl")
        resumed += any(e["kind"] == "run.resume" for e in events)
        for jid in {e["agent"] for e in events}:
            seqs = line_seqs(events, jid)
            assert seqs == list(range(len(seqs))), (run, jid)  # gapless, no event twice
    assert resumed >= 1  # the killed worker's run went on elsewhere from its checkpoint
