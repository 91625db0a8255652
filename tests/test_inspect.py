"""``bdi-rl inspect``: the Mind Inspector in the terminal, over a finished run."""

from __future__ import annotations

from pathlib import Path

import pytest

from bdi_rl.trace.kinds import CYCLE, INTENTIONS, OPTIONS
from bdi_rl.trace.reading import read_trace
from tests.conftest import beliefs_after as _beliefs_after
from tests.conftest import run_main
from tests.conftest import run_named as _run_named


def test_inspect_shows_the_mind_at_an_event(runs):
    run_dir = _run_named(runs, "tiny")
    events = [e for e in read_trace(run_dir / "trace.jsonl") if e["agent"] == "learner@localhost"]
    result = run_main("inspect", run_dir.name, "--runs", str(runs), "--agent", "learner", "--event", "700")
    assert result.returncode == 0, result.stderr
    assert "event 700 of" in result.stdout and events[700]["kind"] in result.stdout
    for belief in _beliefs_after(events, 700):
        assert belief in result.stdout
    assert "@episode" in result.stdout or "@navigate" in result.stdout or "@train" in result.stdout


def test_inspect_finds_an_episode_and_step(runs):
    run_dir = _run_named(runs, "tiny")
    result = run_main("inspect", str(run_dir), "--agent", "learner@localhost", "--episode", "5", "--step", "2")
    assert result.returncode == 0, result.stderr
    assert "episode 5, step 2" in result.stdout and "rl.step" in result.stdout  # the step's last event
    step = next(
        e
        for e in read_trace(run_dir / "trace.jsonl")
        if e["kind"] == "rl.step" and e["episode"] == 5 and e["step"] == 2
    )["data"]
    action = ["left", "down", "right", "up"][step["a"]]
    assert f"why {action}? {action}: " in result.stdout  # the choice explained in words
    assert "Q[s]: left " in result.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--agent", "ghost"], "--agent ghost: no such agent in this run (agents: learner)"),
        (["--agent", "learner", "--event", "99999999"], "--event 99999999: learner@localhost has events 0.."),
        (["--agent", "learner", "--episode", "999"], "episode 999 is not in the trace"),
        (["--agent", "learner", "--step", "3"], "--step needs --episode"),
    ],
)
def test_inspect_bad_input_is_one_line(runs, args, message):
    run = _run_named(runs, "tiny").name
    result = run_main("inspect", run, "--runs", str(runs), *args)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_inspect_an_unknown_run(tmp_path):
    result = run_main("inspect", "nope", "--runs", str(tmp_path), "--agent", "x")
    assert result.returncode == 2 and "nope: not a run directory" in result.stderr


def test_inspect_shows_intention_stacks_events_and_options_at_cycle_level(cycle_run):
    events = [e for e in read_trace(cycle_run / "trace.jsonl") if e["agent"] == "learner@localhost"]
    position = [i for i, e in enumerate(events) if e["episode"] == 1 and e["step"] == 2][-1]
    latest = {
        kind: next(e["data"] for e in reversed(events[: position + 1]) if e["kind"] == kind)
        for kind in (INTENTIONS, OPTIONS, CYCLE)
    }
    result = run_main("inspect", str(cycle_run), "--agent", "learner", "--episode", "1", "--step", "2")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"event {position} of" in out
    # Each intention's stack, innermost first, each means at the file:line it runs next.
    assert "intentions (stacks)" in out
    [stack] = latest[INTENTIONS]["intentions"]
    rows = [line.strip("│ ").split() for line in out.splitlines() if "+!" in line and ".asl:" in line]
    means = [[f"@{m['plan']}", m["trigger"], f"{Path(m['file']).name}:{m['line']}"] for m in reversed(stack["means"])]
    assert [r[-3:] for r in rows] == means
    assert rows[0][:2] == [f"#{stack['id']}", stack["state"]]
    assert means[0][0] == "@navigate" and means[0][2].startswith("episode.asl:")  # lib/episode.asl
    assert any(m[0] == "@episode" and m[2].startswith("episode.asl:") for m in means)
    # The latest cycle's events, and the latest plan selection.
    cycle = latest[CYCLE]
    assert f"events (cycle {cycle['n']})" in out
    assert "taken: " + (", ".join(cycle["events"]) or "none") in out
    assert "pending: " + (", ".join(cycle["pending"]) or "none") in out
    assert "options (latest plan selection)" in out
    assert "event +!navigate" in out and "relevant: @navigate" in out and "applicable: @navigate" in out
    assert "selected: @navigate" in out


def test_inspect_keeps_the_plain_intentions_below_cycle_level(runs):
    result = run_main("inspect", str(_run_named(runs, "tiny")), "--agent", "learner", "--event", "700")
    assert result.returncode == 0, result.stderr
    assert "intentions (" in result.stdout and "intentions (stacks)" not in result.stdout
    assert "options (" not in result.stdout and "events (cycle" not in result.stdout


def test_event_data_prints_without_floating_point_noise():
    """The issue saw ``epsilon 0.7150000000000001``: 12 significant digits, nothing lost."""
    from bdi_rl.readers.inspector import _tidy

    assert _tidy({"epsilon": 0.7150000000000001, "q": [0.1 + 0.2, 1 / 3], "s": 3}) == {
        "epsilon": 0.715,
        "q": [0.3, 0.333333333333],
        "s": 3,
    }
