"""The speed users quote: ``env_steps_per_second`` is all learners' training steps over the
wall time the run trained, however its learners shared the machine (issue 33)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bdi_rl.rl.throughput import TrainingSpan, steps_per_second, training_seconds, union_seconds
from bdi_rl.spec import load_spec
from bdi_rl.trace.reading import read_trace
from bdi_rl.xmpp.summary import summary_from_trace
from bdi_rl.xmpp.telemetry import AgentStats
from tests.conftest import run_cli


def test_learners_taking_turns_count_the_whole_phase():
    """One process, learners one after another: the run trained from the first turn's start
    to the last one's end (a learner's final evaluation between turns is part of the run's
    training phase; its own figure leaves it out)."""
    turns = [TrainingSpan(float(k), k + 0.5) for k in range(1000)]
    assert training_seconds(turns, now=2000.0) == pytest.approx(999.5)
    assert sum(turn.seconds(now=2000.0) for turn in turns) == pytest.approx(500.0)


def test_learners_side_by_side_count_the_longest():
    """Processes of their own: the run trained for as long as its longest learner."""
    side_by_side = [TrainingSpan(0.0, 10.0), TrainingSpan(0.5, 9.0), TrainingSpan(1.0, 10.5)]
    assert training_seconds(side_by_side, now=20.0) == pytest.approx(10.5)


def test_an_evaluation_is_not_training_unless_another_learner_trains_meanwhile():
    alone = TrainingSpan(0.0, 10.0, pauses=[(2.0, 5.0)])
    assert training_seconds([alone], now=20.0) == pytest.approx(7.0)
    other = TrainingSpan(3.0, 4.0)  # trains during the first's evaluation
    assert training_seconds([alone, other], now=20.0) == pytest.approx(8.0)


def test_a_learner_still_training_counts_until_now():
    assert TrainingSpan(5.0).seconds(now=8.0) == pytest.approx(3.0)
    assert TrainingSpan(5.0, pauses=[(6.0, 7.0)]).seconds(now=8.0) == pytest.approx(2.0)


def test_overlapping_and_nested_intervals_are_counted_once():
    assert union_seconds([(0, 4), (1, 2), (3, 6), (8, 9)]) == pytest.approx(7.0)
    assert union_seconds([]) == 0.0
    assert steps_per_second(100, 0.0) == 0.0


MANY_LEARNERS = """
name = "crowd"
episodes = 15
eval_episodes = 1
seed = 1
trace = "episode"

[env]
id = "FrozenLake-v1"
kwargs = { map_name = "4x4", is_slippery = false }

[[agents]]
name = "learner"
count = 60
"""


@pytest.fixture(scope="module")
def crowd_run(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("crowd")
    spec = tmp / "crowd.toml"
    spec.write_text(MANY_LEARNERS)
    result = run_cli("run", str(spec), "--runs", str(tmp / "runs"), "--no-progress")
    assert result.returncode == 0, result.stderr
    return Path(result.stdout.strip().splitlines()[-1])


def _trained_between(run: Path) -> tuple[int, float]:
    """All learners' env steps, and the time from the first episode's end to the last's."""
    episodes = [e for e in read_trace(run / "trace.jsonl") if e["kind"] == "episode.end"]
    steps = sum(e["data"]["length"] for e in episodes)
    ends = [e["ts"] for e in episodes]
    return steps, max(ends) - min(ends)


def test_many_learners_in_one_process_report_their_steps_over_the_time_they_trained(crowd_run):
    """60 learners in one process finish their few episodes in turns: the figure is the
    steps over the time the run spent training, not over one learner's turn (which made a
    1000-learner run report 32 million steps/s)."""
    summary = json.loads((crowd_run / "summary.json").read_text())
    steps, spread = _trained_between(crowd_run)
    assert steps == sum(a["env_steps"] for a in summary["agents"].values())
    seconds = summary["train_seconds"]
    assert spread <= seconds <= min(spread * 1.05 + 0.05, summary["wall_seconds"])
    assert summary["env_steps_per_second"] == pytest.approx(steps / seconds, rel=0.01)
    for agent in summary["agents"].values():  # each learner over its own training, within the run's
        assert 0 < agent["env_steps"] / agent["env_steps_per_second"] <= seconds * 1.01


def test_the_trace_gives_the_summary_the_run_gave(crowd_run):
    """The telemetry role (compose, agents in processes of their own) builds summary.json from
    the events: the same training time and speed as ``bdi-rl run``'s own, within 5 %."""
    live = json.loads((crowd_run / "summary.json").read_text())
    stats: dict[str, AgentStats] = {}
    for event in read_trace(crowd_run / "trace.jsonl"):
        if event["kind"] in AgentStats.KINDS:
            stats.setdefault(event["agent"], AgentStats()).add(event)
    spec = load_spec(crowd_run / "spec.toml")
    learners = [jid for jid in stats if jid.startswith("learner")]
    assert len(learners) == 60
    rebuilt = summary_from_trace(live["run"], spec, stats, learners, live["wall_seconds"])
    assert rebuilt["train_seconds"] == pytest.approx(live["train_seconds"], rel=0.05)
    assert rebuilt["env_steps_per_second"] == pytest.approx(live["env_steps_per_second"], rel=0.05)
