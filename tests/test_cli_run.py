"""The real ``bdi-rl run`` on the embedded XMPP server: results, run directory, trace."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import orjson
import pytest

from bdi_rl.readers.overview import run_overview
from bdi_rl.readers.runindex import RunIndex
from bdi_rl.rl.checkpoint import load_checkpoint
from bdi_rl.spec import load_spec
from bdi_rl.trace.reading import read_trace
from tests.conftest import AGENTS, MINIMAL_SPEC, line_seqs, run_cli

STEP_KINDS = {
    "run.start",
    "run.stop",
    "agent.start",
    "agent.stop",
    "belief.add",
    "belief.del",
    "goal.add",
    "intention.start",
    "intention.end",
    "action",
    "rl.step",
    "episode.end",
    "eval",
    "qtable.save",
}


def _run_dir(result) -> Path:
    assert result.returncode == 0, result.stderr
    run_dir = Path(result.stdout.strip().splitlines()[-1])  # the last line names the run
    assert run_dir.is_dir()
    return run_dir


@pytest.fixture(scope="module")
def frozenlake_run(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    return _run_dir(run_cli("run", str(AGENTS / "frozenlake-4x4.toml"), "--runs", str(runs)))


def test_default_frozenlake_run_is_solved(frozenlake_run):
    summary = json.loads((frozenlake_run / "summary.json").read_text())
    assert summary["env"] == "FrozenLake-v1" and summary["run"] == frozenlake_run.name
    assert frozenlake_run.name.startswith("FrozenLake-v1__frozenlake-4x4__1__")
    agent = summary["agents"]["learner"]
    assert agent["episodes"] == 6000 and agent["env_steps"] > 6000
    assert agent["eval"]["episodes"] == 1000
    assert agent["eval"]["success_rate"] >= 0.70  # best stationary policy: 0.740
    assert summary["env_steps_per_second"] > 0 and summary["wall_seconds"] > 0
    checkpoint = load_checkpoint(frozenlake_run / agent["qtable"])
    q, meta = checkpoint.q, checkpoint.meta
    assert q.shape == (16, 4) and meta["episodes"] == 6000 and meta["agent"] == "learner"


def test_run_directory_holds_a_rerunnable_spec(frozenlake_run):
    spec = load_spec(frozenlake_run / "spec.toml")
    assert spec.name == "frozenlake-4x4" and spec.episodes == 6000
    assert Path(spec.agents[0].asl).name == "learner.asl"


def test_trace_has_every_kind_and_gapless_seqs(frozenlake_run):
    events = read_trace(frozenlake_run / "trace.jsonl")
    assert STEP_KINDS <= {e["kind"] for e in events}
    seqs = defaultdict(list)
    for line in (frozenlake_run / "trace.jsonl").read_bytes().splitlines():  # a step record is one seq
        event = orjson.loads(line)
        seqs[event["agent"]].append(event["seq"])
    assert set(seqs) == {"learner@localhost", "telemetry@localhost"}
    for agent, numbers in seqs.items():
        assert numbers == list(range(len(numbers))), agent
    episodes = [e for e in events if e["kind"] == "episode.end"]
    assert len(episodes) == 6000
    assert {e["data"]["outcome"] for e in episodes} <= {"goal", "hole", "timeout"}


def test_trace_replays_the_mind_step_by_step(frozenlake_run):
    """Folding belief events reproduces what the learner perceived after every env step."""
    events = [e for e in read_trace(frozenlake_run / "trace.jsonl") if e["agent"] == "learner@localhost"]
    beliefs: set[str] = set()
    stack: list[str] = []
    checked = 0
    pending_step = None
    for event in events:
        kind, data = event["kind"], event["data"]
        if kind == "belief.add":
            beliefs.add(data["belief"])
        elif kind == "belief.del":
            beliefs.remove(data["belief"])
        elif kind == "intention.start":
            stack.append(data["plan"])
        elif kind == "rl.step":
            pending_step = data
        elif kind == "action" and data["name"] == ".rl_act" and pending_step is not None:
            s2 = pending_step["s2"]
            assert f"state({s2})" in beliefs
            assert f"pos({s2 % 4}, {s2 // 4})" in beliefs
            assert "navigate" in stack
            checked += 1
            pending_step = None
        elif kind == "intention.end" and data["plan"] in stack:
            stack.remove(data["plan"])
    assert checked > 1000


def _tiny_run(tmp_path: Path, write_spec, seed: int, mode: str = "step", extra: str = "") -> Path:
    spec = write_spec(
        MINIMAL_SPEC.replace("seed = 3", f"seed = {seed}") + f'mode = "{mode}"\n' + extra,
        name=f"tiny-{seed}-{mode}.toml",
    )
    result = run_cli("run", str(spec), "--runs", str(tmp_path / "runs"), "--episodes", "150", "--trace", "episode")
    return _run_dir(result)


def test_same_seed_same_qtable(tmp_path, write_spec):
    first = _tiny_run(tmp_path, write_spec, seed=5)
    second = _tiny_run(tmp_path, write_spec, seed=5)
    other = _tiny_run(tmp_path, write_spec, seed=6)
    q1 = load_checkpoint(first / "qtables" / "learner.npz").q
    q2 = load_checkpoint(second / "qtables" / "learner.npz").q
    q3 = load_checkpoint(other / "qtables" / "learner.npz").q
    assert np.array_equal(q1, q2)
    assert not np.array_equal(q1, q3)


def test_episode_mode_learns(tmp_path, write_spec):
    run_dir = _tiny_run(tmp_path, write_spec, seed=2, mode="episode")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["agents"]["learner"]["eval"]["success_rate"] == 1.0  # non-slippery 4x4
    kinds = {e["kind"] for e in read_trace(run_dir / "trace.jsonl")}
    assert "episode.end" in kinds and "rl.step" not in kinds  # episode-level trace


def test_several_learners_share_one_run(tmp_path, write_spec):
    spec = write_spec(MINIMAL_SPEC.replace('name = "learner"', 'name = "learner"\ncount = 3'))
    run_dir = _run_dir(
        run_cli("run", str(spec), "--runs", str(tmp_path / "runs"), "--episodes", "100", "--trace", "step")
    )
    summary = json.loads((run_dir / "summary.json").read_text())
    assert set(summary["agents"]) == {"learner-1", "learner-2", "learner-3"}
    events = read_trace(run_dir / "trace.jsonl")
    for name in ("learner-1", "learner-2", "learner-3"):
        mine = line_seqs(events, f"{name}@localhost")
        assert mine == list(range(len(mine))) and sum(e["agent"] == f"{name}@localhost" for e in events) > 500
        assert (run_dir / "qtables" / f"{name}.npz").is_file()


@pytest.mark.parametrize(
    "name, metric, threshold",
    [
        ("frozenlake-8x8", "success_rate", 0.85),
        ("taxi", "mean_return", 7.5),
        ("cliffwalking", "mean_return", -13.0),
        ("frozenlake-team", "success_rate", 0.85),
        ("taxi-team", "mean_return", 7.5),
    ],
)
def test_shipped_specs_reach_their_thresholds(tmp_path, name, metric, threshold):
    """Each shipped spec's defaults solve its env, for every learner (4x4 is checked above)."""
    run_dir = _run_dir(
        run_cli("run", str(AGENTS / f"{name}.toml"), "--runs", str(tmp_path), "--trace", "episode", "--no-progress")
    )
    agents = json.loads((run_dir / "summary.json").read_text())["agents"]
    learners = {name: entry for name, entry in agents.items() if entry.get("role") != "coordinator"}
    assert learners and len(learners) == (4 if "team" in name else 1)
    for entry in learners.values():
        assert entry["eval"][metric] >= threshold, entry


def _interrupted_run(runs: Path, ready: Callable[[], bool], *args: str) -> tuple[int, str, str]:
    """``bdi-rl run frozenlake-4x4 --runs RUNS ARGS`` sent SIGINT once ``ready()`` (or after
    60 s); its exit status, stdout and stderr."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bdi_rl",
            "run",
            str(AGENTS / "frozenlake-4x4.toml"),
            "--runs",
            str(runs),
            "--no-progress",
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not ready():
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out, err


def test_ctrl_c_keeps_what_was_learned(tmp_path):
    """SIGINT mid-run: exit 130, a valid gapless trace, a Q-table and a summary marked interrupted."""
    runs = tmp_path / "runs"

    def traced_a_while() -> bool:
        traces = list(runs.glob("*/trace.jsonl")) if runs.exists() else []
        return bool(traces) and traces[0].stat().st_size > 100_000

    returncode, out, err = _interrupted_run(runs, traced_a_while)
    assert returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    run_dir = Path(out.strip().splitlines()[-1])
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["env_steps_per_second"] > 0
    assert 0 < summary["agents"]["learner"]["episodes"] < 6000
    checkpoint = load_checkpoint(run_dir / "qtables" / "learner.npz")
    meta = checkpoint.meta
    assert meta["episodes"] == summary["agents"]["learner"]["episodes"]
    events = read_trace(run_dir / "trace.jsonl")
    seqs = line_seqs(events, "learner@localhost")
    assert seqs == list(range(len(seqs)))
    assert events[-1]["kind"] == "run.stop"
    row = run_overview(RunIndex(run_dir))
    assert (row["state"], row["learners"], row["live"]) == ("interrupted", 1, False)


def test_ctrl_c_during_start_up_still_leaves_a_summary(tmp_path):
    """SIGINT as soon as the run directory exists (the server and agents still starting, as
    when bdi-rl serve's Stop comes early): exit 130, and the run directory is a finished one
    with its summary marked interrupted, not a half-made directory; --resume then runs it."""
    runs = tmp_path / "runs"
    returncode, _, err = _interrupted_run(runs, lambda: bool(list(runs.glob("*/spec.toml"))), "--trace", "episode")
    assert returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    (run_dir,) = runs.iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["experiment"] == "frozenlake-4x4"
    row = run_overview(RunIndex(run_dir))  # the runs list: interrupted, with its one learner
    assert (row["state"], row["learners"], row["live"]) == ("interrupted", 1, False)
    result = run_cli("run", "--resume", str(run_dir), "--no-progress")
    assert result.returncode == 0, result.stderr
    resumed = json.loads((run_dir / "summary.json").read_text())
    assert "interrupted" not in resumed and resumed["agents"]["learner"]["episodes"] == 6000  # the spec's


def test_shipped_spec_by_name_and_module_entry(tmp_path: Path):
    """``python -m bdi_rl`` works like the script, and a shipped spec is found by name."""
    result = run_cli("run", "frozenlake-4x4", "--episodes", "5", "--runs", str(tmp_path / "runs"), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip().splitlines()[-1]).parent == tmp_path / "runs"
