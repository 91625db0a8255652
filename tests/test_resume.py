"""``bdi-rl run --resume``: a run killed with SIGKILL continues from its last checkpoint; the
trace goes on with gapless seqs, a ``run.resume`` event marks the point, and readers see
every episode once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from bdi_rl.readers.runindex import RunIndex
from bdi_rl.readers.runstate import run_state
from bdi_rl.rl.checkpoint import load_checkpoint
from bdi_rl.trace.reading import read_trace
from bdi_rl.trace.steps import expanded
from tests.conftest import line_seqs, run_cli

#: Episodes of the resumable run: enough that it is still training when the test kills it
#: (bdi-rl's runtime does ~600 of these 6-step episodes in 0.2 s).
EPISODES = 3000

SPEC = f"""
name = "resumable"
episodes = {EPISODES}
eval_episodes = 50
seed = 2
checkpoint_every = 50
trace = "step"

[env]
id = "FrozenLake-v1"
kwargs = {{ map_name = "4x4", is_slippery = false }}

[learning]
epsilon_decay_episodes = 200

[[agents]]
name = "learner"
"""


def _complete_events(trace: Path) -> list[dict]:
    """The events of whole lines: a process killed mid-write leaves a torn last line, which
    ``--resume`` cuts (its events were never acknowledged, so they are sent again)."""
    lines = trace.read_bytes().split(b"\n")[:-1]  # the part after the last newline is torn
    return expanded(orjson.loads(line) for line in lines if line)  # step records as their events


def _saved_episodes(trace: Path) -> list[int]:
    """Polled every 50 ms while the run goes: only the checkpoint lines are parsed."""
    if not trace.exists():
        return []
    lines = trace.read_bytes().split(b"\n")[:-1]  # whole lines only
    return [orjson.loads(line)["data"]["episodes"] for line in lines if b'"qtable.save"' in line]


def _killed_run(tmp_path: Path) -> Path:
    """Start a run and SIGKILL it once its trace records a checkpoint of 250 episodes and a
    checkpoint file exists (written once telemetry acknowledges the events before it: with a
    fast learner, a few flushes after its ``qtable.save``)."""
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bdi_rl", "run", str(spec), "--runs", str(runs), "--no-progress"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            run_dirs = list(runs.glob("*/trace.jsonl")) if runs.exists() else []
            if (
                run_dirs
                and max(_saved_episodes(run_dirs[0]), default=0) >= 250
                and (run_dirs[0].parent / "qtables" / "learner.npz").exists()
            ):
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.05)
        else:
            raise AssertionError("the run never reached 250 episodes")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    return run_dirs[0].parent


def test_a_killed_run_resumes_from_its_last_checkpoint(tmp_path):
    run_dir = _killed_run(tmp_path)
    assert not (run_dir / "summary.json").exists()
    checkpointed = load_checkpoint(run_dir / "qtables" / "learner.npz").meta["episodes"]
    assert 50 <= checkpointed < EPISODES and checkpointed % 50 == 0
    before = _complete_events(run_dir / "trace.jsonl")
    last_episode_seen = max(e["episode"] for e in before if e["kind"] == "episode.end")
    # A checkpoint is written only once the trace holds everything before it.
    assert last_episode_seen >= checkpointed - 1

    state = run_state(run_dir)  # no process writes it and it has no summary
    assert state.state == "abandoned", state
    steps_before = load_checkpoint(run_dir / "qtables" / "learner.npz").meta["env_steps"]

    # Two resumes at once: the run directory has one writer; the other is refused, one line.
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    both = [
        subprocess.Popen(
            [sys.executable, "-m", "bdi_rl", "run", "--resume", str(run_dir), "--no-progress"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    outcomes = []
    for proc in both:
        out, err = proc.communicate(timeout=300)
        outcomes.append((proc.returncode, out, err))
    outcomes.sort()
    (refused, _, refusal), (status, out, err) = outcomes[1], outcomes[0]
    assert status == 0, err
    # the second finds the first writing (the lock), or, when the first was quicker than its
    # start-up, the run already finished: either way one line, exit 2, nothing touched
    assert refused == 2 and len(refusal.strip().splitlines()) == 1, refusal
    assert "one writer at a time" in refusal or "the run finished; nothing to resume" in refusal, refusal
    assert Path(out.strip().splitlines()[-1]) == run_dir  # the same run, continued
    assert f"resumed at episode {checkpointed}; this part" in " ".join(out.split())  # the terminal says so

    events = read_trace(run_dir / "trace.jsonl")
    assert events[: len(before)] == before  # nothing written before is touched
    for agent in {e["agent"] for e in events}:
        seqs = line_seqs(events, agent)
        assert seqs == list(range(len(seqs))), agent  # gapless and unique
    resume = next(i for i, e in enumerate(events) if e["kind"] == "run.resume")
    assert events[resume]["data"]["agents"] == {"learner@localhost": checkpointed}
    after = [e for e in events[resume:] if e["kind"] == "episode.end"]
    assert after[0]["episode"] == checkpointed and after[-1]["episode"] == EPISODES - 1
    assert events[-1]["kind"] == "run.stop"

    summary = json.loads((run_dir / "summary.json").read_text())
    learner = summary["agents"]["learner"]
    assert learner["episodes"] == EPISODES and learner["eval"]["success_rate"] == 1.0
    # The throughput is this part's: its steps over its time, the part before named apart
    assert summary["resumed"] == {"episodes": {"learner": checkpointed}, "env_steps_before": steps_before}
    assert run_state(run_dir).state == "finished"
    meta = load_checkpoint(run_dir / "qtables" / "learner.npz").meta
    assert meta["episodes"] == EPISODES and meta["env_steps"] == learner["env_steps"]

    index = RunIndex(run_dir)  # what the viewer, plot and export read: each episode once
    index.refresh()
    episodes = index.agents["learner@localhost"].episodes
    assert [e["episode"] for e in episodes] == list(range(EPISODES)) and not index.live
    mind, _ = index.mind_at("learner@localhost", index.agents["learner@localhost"].events - 1)
    assert not mind.intentions  # the killed mind's unfinished intentions are gone


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--episodes", "5"], "--resume continues the run as its spec.toml says: drop --episodes"),
        (["spec.toml"], "drop the spec"),
    ],
)
def test_resume_takes_no_other_run_settings(tmp_path, extra, message):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    result = run_cli("run", "--resume", str(run_dir), *extra)
    assert result.returncode == 2 and message in result.stderr


def test_a_finished_run_or_a_non_run_is_not_resumed(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.replace(f"episodes = {EPISODES}", "episodes = 3"))
    done = run_cli("run", str(spec), "--runs", str(tmp_path / "runs"), "--no-progress")
    run_dir = Path(done.stdout.strip().splitlines()[-1])
    result = run_cli("run", "--resume", str(run_dir))
    assert result.returncode == 2 and "the run finished; nothing to resume" in result.stderr
    result = run_cli("run", "--resume", str(tmp_path))
    assert result.returncode == 2 and "not a run directory" in result.stderr


def test_a_run_killed_before_it_traced_resumes_from_its_start(tmp_path):
    """A process killed in its run's start-up (a sweep's worker, SIGKILLed as its next run
    began) leaves a run directory with its spec and writer lock and no trace yet: resumed, the
    run starts there and finishes, one trace from episode 0. A folder that merely holds a
    spec.toml is still no run."""
    from bdi_rl.spec import load_spec
    from bdi_rl.xmpp.rundirs import new_spec_run_dir

    spec_file = tmp_path / "spec.toml"
    spec_file.write_text(SPEC.replace(f"episodes = {EPISODES}", "episodes = 3"))
    run_dir, writer = new_spec_run_dir(tmp_path / "runs", load_spec(spec_file), "bdi-rl run")
    writer.release()  # the process died here
    assert not (run_dir / "trace.jsonl").exists()
    result = run_cli("run", "--resume", str(run_dir), "--no-progress")
    assert result.returncode == 0, result.stderr
    events = read_trace(run_dir / "trace.jsonl")
    assert events[0]["kind"] == "run.start" and events[-1]["kind"] == "run.stop"
    assert [e["episode"] for e in events if e["kind"] == "episode.end"] == [0, 1, 2]
    assert run_state(run_dir).state == "finished"
    result = run_cli("run", "--resume", str(tmp_path))
    assert result.returncode == 2 and "not a run directory" in result.stderr
