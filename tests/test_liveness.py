"""A run ends, or says why it cannot (issue 26): the stall watch (``bdi_rl.xmpp.liveness``).

Through the real ``bdi-rl run``: plans that stop without ``.rl_finish`` (one agent; one member
of a team whose others finish), that wait for an askOne nobody answers, and a seated player
that never calls ``.rl_reset`` end in seconds with exit status 1, one line on stderr naming
each agent and what it waits for, and a summary whose entries say they stalled; a long
``.wait`` and a slow episode-mode learner that another agent waits for are not stalls. In an
agent process (``bdi-rl agent``), which cannot see its peers, a stall is a warning with
back-off, never a failure.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest

from bdi_rl.trace.kinds import WORLD_LATE
from bdi_rl.trace.reading import read_trace
from bdi_rl.xmpp import waiting as xmpp_waiting
from bdi_rl.xmpp.liveness import Stall, StallWatch, stall_line
from tests.conftest import ASL, MINIMAL_SPEC, run_cli

#: Seconds a stalled run may take from start to exit: start-up, the stall watch's quiet
#: period and the flush, on a loaded machine. A stall that is not detected runs forever.
ENDS_WITHIN = 60

STALLED = "bdi-rl: the run stalled, nothing can happen any more: "


def _spec(tmp_path: Path, agents: str, **plans: str) -> Path:
    for name, text in plans.items():
        (tmp_path / f"{name}.asl").write_text(text)
    spec = tmp_path / "spec.toml"
    spec.write_text(MINIMAL_SPEC.split("[[agents]]")[0] + agents)
    return spec


def _run(tmp_path: Path, spec: Path, *args: str) -> tuple[Any, float, Path]:
    began = time.monotonic()
    result = run_cli(
        "run", str(spec), "--runs", str(tmp_path / "runs"), "--no-progress", *args, timeout=ENDS_WITHIN * 3
    )
    return result, time.monotonic() - began, next((tmp_path / "runs").iterdir())


def _stops(run_dir: Path) -> dict[str, str]:
    return {
        e["agent"].split("@")[0]: e["data"]["reason"]
        for e in read_trace(run_dir / "trace.jsonl")
        if e["kind"] == "agent.stop"
    }


IDLE = '!start.\n@start +!start <- .print("started"); +note(1).\n'


@pytest.mark.slow
def test_a_learner_that_stops_without_rl_finish_is_reported_in_seconds(tmp_path) -> None:
    spec = _spec(tmp_path, '[[agents]]\nname = "learner"\nasl = "idle.asl"\n', idle=IDLE)
    result, seconds, run_dir = _run(tmp_path, spec)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [STALLED + "learner: no intention left, .rl_finish never called"]
    assert seconds < ENDS_WITHIN
    assert result.stdout.strip().splitlines()[-1] == str(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["agents"]["learner"]["failure"] == "stalled: no intention left, .rl_finish never called"
    assert _stops(run_dir) == {"learner": "stalled: no intention left, .rl_finish never called"}


@pytest.mark.slow
def test_a_team_member_that_stalls_is_named_and_the_others_finish(tmp_path) -> None:
    agents = (
        f'[[agents]]\nname = "worker"\ncount = 2\nasl = "{ASL / "learner.asl"}"\n'
        '[[agents]]\nname = "idler"\nasl = "idle.asl"\n'
    )
    result, seconds, run_dir = _run(tmp_path, _spec(tmp_path, agents, idle=IDLE))
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [STALLED + "idler: no intention left, .rl_finish never called"]
    assert seconds < ENDS_WITHIN
    summary = json.loads((run_dir / "summary.json").read_text())["agents"]
    for name in ("worker-1", "worker-2"):
        assert summary[name]["episodes"] == 20 and "failure" not in summary[name]
    assert summary["idler"]["failure"].startswith("stalled: ")
    assert _stops(run_dir) == {
        "worker-1": "finished",
        "worker-2": "finished",
        "idler": "stalled: no intention left, .rl_finish never called",
    }


ASKER = "!start.\n@start +!start <- .send({whom}, askOne, value(X), A); .print(A); .rl_finish.\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    "whom, said",
    [
        ("bob", "alice: waits for an answer to askOne from bob@localhost; bob: waits for {+go/0} (.wait)"),
        ("nobody", "alice: waits for an answer to askOne from nobody@localhost"),
    ],
    ids=["a peer that never answers", "an agent not in the run"],
)
def test_an_askone_nobody_answers_is_reported_naming_whom(tmp_path, whom, said) -> None:
    agents = '[[agents]]\nname = "alice"\nasl = "asker.asl"\n'
    if whom == "bob":  # bob's +?value plan waits for a belief nobody will add
        agents += '[[agents]]\nname = "bob"\nrole = "coordinator"\nasl = "bob.asl"\n'
    spec = _spec(tmp_path, agents, asker=ASKER.format(whom=whom), bob="@v +?value(X) <- .wait({+go}); X = 1.\n")
    result, seconds, run_dir = _run(tmp_path, spec)
    assert result.returncode == 1, result.stderr
    # the embedded server bounces a message to a JID with no session (no offline storage): the
    # agent says so once, then the stall names what it waits for
    bounce = [
        "WARNING bdi_rl.xmpp.agent: alice@localhost: BDI messages to nobody@localhost bounce (is that agent running?)"
    ]
    assert result.stderr.splitlines() == (bounce if whom == "nobody" else []) + [STALLED + said]
    assert seconds < ENDS_WITHIN
    summary = json.loads((run_dir / "summary.json").read_text())["agents"]
    assert summary["alice"]["failure"] == f"stalled: waits for an answer to askOne from {whom}@localhost"


@pytest.mark.slow
def test_a_seated_player_that_never_resets_does_not_hold_up_the_world(tmp_path) -> None:
    """The world begins each episode at the reset deadline without it, finishes its seat as
    stuck after 3, and player-1 trains to the end; then the run stalls on player-2 alone."""
    spec = tmp_path / "world.toml"
    (tmp_path / "idle.asl").write_text(IDLE)
    spec.write_text(f"""
name = "worldidle"
seed = 0
episodes = 30
eval_episodes = 1
[env]
id = "climbing_game_v0"
[world]
bind = {{ player_0 = "player-1", player_1 = "player-2" }}
step_deadline_ms = 300
[[agents]]
name = "player-1"
asl = "{ASL / "learner.asl"}"
[[agents]]
name = "player-2"
asl = "idle.asl"
""")
    result, seconds, run_dir = _run(tmp_path, spec)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert lines[-1] == STALLED + "player-2: no intention left, .rl_finish never called"
    assert "player-2 missed the 0.3 s deadline of .rl_reset at joint episode 0" in lines[0]
    assert "player-2 left at joint episode 2 (stuck: it missed 3 deadlines of 0.3 s in a row" in lines[1]
    assert len(lines) == 3 and seconds < ENDS_WITHIN
    summary = json.loads((run_dir / "summary.json").read_text())["agents"]
    assert summary["player-1"]["episodes"] == 30 and "failure" not in summary["player-1"]
    assert summary["world"] == {"role": "world", "episodes": 30, "joint_steps": 30, "seats_left": ["player-2"]}
    late = [e["data"] for e in read_trace(run_dir / "trace.jsonl") if e["kind"] == WORLD_LATE]
    assert late == [{"call": ".rl_reset", "agents": ["player-2"]}] * 2 + [
        {"call": ".rl_reset", "agents": ["player-2"], "stuck": ["player-2"]}
    ]


@pytest.mark.slow
def test_long_waits_and_long_reasoning_cycles_are_not_stalls(tmp_path) -> None:
    """Not a stall: a learner in a 4 s .wait (a timer), and a coordinator that waits for a
    learner whose one reasoning cycle (3000 greedy Taxi episodes) blocks the process for
    seconds. Both runs finish, exit status 0."""
    spec = _spec(
        tmp_path,
        '[[agents]]\nname = "learner"\nasl = "wait.asl"\n',
        wait="!start.\n@start +!start <- .wait(4000); .rl_finish.\n",
    )
    result, seconds, _ = _run(tmp_path, spec)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert seconds > 4
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "slow.asl").write_text("!start.\n@start +!start <- .rl_evaluate; .send(boss, tell, done); .rl_finish.\n")
    (slow / "boss.asl").write_text('@done +done[source(L)] : L == "learner@localhost" <- .finish.\n')
    (slow / "spec.toml").write_text("""
name = "slow"
episodes = 1
eval_episodes = 3000
seed = 3
trace = "episode"
[env]
id = "Taxi-v4"
[[agents]]
name = "learner"
mode = "episode"
asl = "slow.asl"
[[agents]]
name = "boss"
role = "coordinator"
asl = "boss.asl"
""")
    result, _, run_dir = _run(slow, slow / "spec.toml")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    summary = json.loads((run_dir / "summary.json").read_text())["agents"]
    assert summary["learner"]["eval"]["episodes"] == 3000 and "failure" not in summary["boss"]
    [evaluation] = [e["data"] for e in read_trace(run_dir / "trace.jsonl") if e["kind"] == "eval"]
    assert evaluation["seconds"] > xmpp_waiting.STALL_SECONDS  # the cycle outlasted the watch's quiet period


# -- the watch itself -----------------------------------------------------------------------------


class Quiet:
    """An agent that cannot act by itself (as TracedBdiAgent reports it to the watch)."""

    def __init__(self, name: str, waits: str = "no intention left, .rl_finish never called") -> None:
        self.name = name
        self.done = asyncio.Event()
        self.failure: str | None = None
        self.able = False
        self.mark = 0
        self._waits = waits

    def can_act(self) -> bool:
        return self.able

    def progress_mark(self) -> tuple[int]:
        return (self.mark,)

    def waits(self) -> str:
        return self._waits


def test_the_watch_reports_only_a_lasting_stillness_and_backs_off() -> None:
    now = [0.0]
    a, b = Quiet("a"), Quiet("b", "waits for an answer to askOne from a@x")
    watch = StallWatch([a, b], quiet_s=2.0, longest_s=8.0, clock=lambda: now[0])
    assert watch.check() is None
    now[0] = 1.9
    assert watch.check() is None
    a.mark = 1  # a did something (a message came, a cycle ran): the quiet period starts over
    assert watch.check() is None
    now[0] = 3.8
    assert watch.check() is None
    now[0] = 3.9
    stall = watch.check()
    assert stall is not None and stall.text() == (
        "a: no intention left, .rl_finish never called; b: waits for an answer to askOne from a@x"
    )
    assert watch.snooze() == 4.0 and watch.check() is None
    now[0] = 5.9
    assert watch.check() is not None and watch.snooze() == 8.0
    now[0] = 10.0  # still since 1.9
    assert watch.check() is not None and watch.snooze() == 16.0  # twice as long
    now[0] = 18.0
    assert watch.check() is not None and watch.snooze() == 24.0  # at most longest_s (8) later
    now[0] = 18.1  # the next check: the next report is 8 s away, not at every check from now on
    assert watch.check() is None
    now[0] = 26.0
    assert watch.check() is not None and watch.snooze() == 32.0
    b.able = True  # a timer, a running intention: nothing is stalled, whatever it looked like
    assert watch.check() is None and watch.quiet_s == 2.0
    b.able, a.done = False, asyncio.Event()
    a.done.set()
    b.done.set()
    assert watch.check() is None  # every agent done: nothing to report


def test_the_one_line_names_each_stalled_agent() -> None:
    failures = {"a@x": "stalled: no intention left", "b@x": "trace events were not acknowledged by telemetry"}
    assert stall_line(failures) == "the run stalled, nothing can happen any more: a: no intention left"
    assert stall_line({"a@x": "stopped: b failed"}) is None
    assert Stall({"a": "w"}, 1.0).text() == "a: w"


async def test_an_agent_process_warns_with_back_off_and_never_fails(monkeypatch, caplog) -> None:
    """``bdi-rl agent`` cannot see its peers: an idle learner may be waiting for a coordinator
    elsewhere, so a stall is logged (each agent, what it waits for, the next warning's
    delay, growing) and never turned into a failure."""
    monkeypatch.setattr(xmpp_waiting, "IDLE_WARNING_FIRST", 0.2)
    learner = Quiet("learner-1", "no intention left, .rl_finish never called")
    waiting = asyncio.ensure_future(xmpp_waiting._wait_for_learners([learner], None, "warn"))
    with caplog.at_level(logging.WARNING, logger="bdi_rl.xmpp.waiting"):
        await asyncio.sleep(2.0)
        assert not waiting.done() and learner.failure is None
        learner.done.set()
        await asyncio.wait_for(waiting, 2)
    warnings = [r.getMessage() for r in caplog.records]
    assert 2 <= len(warnings) <= 4, warnings  # at 0.2 s, 0.4 s, 0.8 s, 1.6 s: back-off
    assert warnings[0].startswith("learner-1: idle for 0 s: no intention left, .rl_finish never called")
    assert "a message from another process may; next warning in 0 s" in warnings[0]
    assert learner.failure is None


async def test_bdi_rl_run_ends_a_stall_and_names_what_each_agent_waits_for() -> None:
    first, second = Quiet("a"), Quiet("b", "waits for {+go/0} (.wait)")
    began = time.monotonic()
    await asyncio.wait_for(xmpp_waiting._wait_for_learners([first, second], None, "fail"), 10)
    assert xmpp_waiting.STALL_SECONDS <= time.monotonic() - began < xmpp_waiting.STALL_SECONDS + 2
    assert (first.failure, second.failure) == (
        "stalled: no intention left, .rl_finish never called",
        "stalled: waits for {+go/0} (.wait)",
    )
