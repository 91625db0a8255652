"""``bdi-rl export``: CSV and TensorBoard files read back and compared with the trace."""

from __future__ import annotations

import csv

import pytest

from bdi_rl.trace.reading import read_trace
from tests.conftest import run_main
from tests.conftest import run_named as _run_named


def _episode_ends(run_dir):
    return [e for e in read_trace(run_dir / "trace.jsonl") if e["kind"] == "episode.end"]


def test_csv_holds_every_episode_and_the_evaluation(runs, tmp_path):
    run_dir = _run_named(runs, "tiny")
    out = tmp_path / "tiny.csv"
    result = run_main("export", run_dir.name, "--runs", str(runs), "--csv", str(out))
    assert result.returncode == 0, result.stderr
    with open(out) as f:
        table = list(csv.DictReader(f))
    episodes = [r for r in table if r["kind"] == "episode"]
    ends = _episode_ends(run_dir)
    assert [float(r["episodic_return"]) for r in episodes] == [e["data"]["return"] for e in ends]
    assert [int(r["episodic_length"]) for r in episodes] == [e["data"]["length"] for e in ends]
    steps = 0
    for row, end in zip(episodes, ends, strict=False):
        steps += end["data"]["length"]
        assert int(row["global_step"]) == steps and float(row["epsilon"]) == end["data"]["epsilon"]
    evaluation = [e for e in read_trace(run_dir / "trace.jsonl") if e["kind"] == "eval"][0]["data"]
    (row,) = [r for r in table if r["kind"] == "eval"]
    assert float(row["episodic_return"]) == evaluation["mean_return"]
    assert float(row["success_rate"]) == evaluation["success_rate"] and int(row["episode"]) == 20


def test_tensorboard_scalars_use_cleanrl_tags(runs, tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run_dir = _run_named(runs, "tiny")
    result = run_main("export", str(run_dir), "--tensorboard", str(tmp_path / "tb"))
    assert result.returncode == 0, result.stderr
    logs = tmp_path / "tb" / run_dir.name / "learner"
    accumulator = EventAccumulator(str(logs))
    accumulator.Reload()
    tags = set(accumulator.Tags()["scalars"])
    assert {
        "charts/episodic_return",
        "charts/episodic_length",
        "charts/epsilon",
        "charts/SPS",
        "eval/episodic_return",
    } <= tags
    ends = _episode_ends(run_dir)
    returns = accumulator.Scalars("charts/episodic_return")
    assert [s.value for s in returns] == pytest.approx([e["data"]["return"] for e in ends])
    assert returns[-1].step == sum(e["data"]["length"] for e in ends)
    # A second export refuses to overwrite; nothing half-written is left beside it.
    again = run_main("export", str(run_dir), "--tensorboard", str(tmp_path / "tb"))
    assert again.returncode == 2 and "already exists" in again.stderr
    assert sorted(p.name for p in (tmp_path / "tb").iterdir()) == [run_dir.name]


def test_export_of_a_run_without_episodes_is_refused(runs, tmp_path):
    result = run_main("export", _run_named(runs, "hostile").name, "--runs", str(runs), "--csv", str(tmp_path / "x.csv"))
    assert result.returncode == 2 and "no episodes" in result.stderr
    assert not (tmp_path / "x.csv").exists()
