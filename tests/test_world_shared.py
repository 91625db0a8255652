"""Shared worlds: learners that act in one PettingZoo world, one step for all.

The world's side (``bdi.world.SharedWorld``) on the real matrix games and lbforaging, driven
by seat ends that record what the world tells each agent; the spec's checks; and whole runs:
``bdi-rl run`` of the shipped specs (the coordination plans find the optimum of both games,
which CI checks here on a few seeds, and independent learners miss it), a seat that misses
the deadline, and the world across processes over ejabberd.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from bdi_rl.bdi.world import STUCK_AFTER, SharedWorld
from bdi_rl.rl.qlearning import EvalResult
from bdi_rl.rl.worldenv import make_world
from bdi_rl.spec import SpecError, load_spec
from bdi_rl.trace.kinds import WORLD_LATE, WORLD_STEP, TraceLevel
from bdi_rl.trace.reading import read_trace
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp.setup import prepare_experiment
from tests.conftest import line_seqs, run_cli, run_named
from tests.test_processes import _assert_every_event_once as assert_every_event_once
from tests.test_processes import across_processes

ROOT = Path(__file__).resolve().parent.parent


class Recorded:
    """A seat end that keeps what the world told its agent."""

    def __init__(self) -> None:
        self.heard: list[tuple[str, Any]] = []

    def begun(self, obs: int) -> None:
        self.heard.append(("begun", obs))

    def stepped(
        self, a: int, s2: int, r: float, terminated: bool, truncated: bool, defaulted: bool, ahead: bool = False
    ) -> None:
        self.heard.append(("stepped", (a, s2, r, terminated, truncated, defaulted)))
        if ahead:
            self.heard.append(("reset taken", None))

    def evaluated(self, result: EvalResult, seconds: float) -> None:
        self.heard.append(("evaluated", result))

    def refused(self, why: str) -> None:
        self.heard.append(("refused", why))


class Timers:
    """The world's clock, fired by hand (a deadline that passes when the test says so)."""

    def __init__(self) -> None:
        self.pending: list[list[Any]] = []

    def schedule(self, seconds: float, callback: Any) -> Any:
        entry = [seconds, callback, True]

        class Handle:
            def cancel(self) -> None:
                entry[2] = False

        self.pending.append(entry)
        return Handle()

    def fire(self) -> None:
        for entry in [e for e in self.pending if e[2]]:
            entry[2] = False
            entry[1]()


def _world(env_id: str, **kwargs: Any) -> tuple[SharedWorld, dict[str, Recorded], Tracer, Timers]:
    world = make_world(env_id, kwargs)
    tracer = Tracer("run", "world@localhost", TraceLevel.STEP)
    timers = Timers()
    shared = SharedWorld(
        world, tracer, seed=3, deadline_s=1.0, default_action=0, schedule=timers.schedule, eval_episodes=5
    )
    ends = {seat: Recorded() for seat in world.agents}
    for i, (seat, end) in enumerate(ends.items()):
        shared.seat(seat, f"player-{i + 1}", end)
    return shared, ends, tracer, timers


def _world_steps(tracer: Tracer) -> list[dict]:
    tracer.flush_record()
    return [e["data"] for e in tracer.pending if e["kind"] == WORLD_STEP]


def _late(tracer: Tracer) -> list[dict]:
    """The world's ``world.late`` events: (episode, data)."""
    tracer.flush_record()
    return [{"episode": e["episode"], **e["data"]} for e in tracer.pending if e["kind"] == WORLD_LATE]


def test_the_world_steps_once_every_agent_has_chosen() -> None:
    shared, ends, tracer, _ = _world("climbing_game_v0")
    shared.ask_reset("player_0")
    assert ends["player_0"].heard == []  # the other has not asked yet
    shared.ask_reset("player_1")
    assert [e.heard for e in ends.values()] == [[("begun", 0)], [("begun", 0)]]
    shared.choose("player_1", 2)
    assert len(ends["player_1"].heard) == 1 and shared.steps == 0
    shared.choose("player_0", 1)  # (1, 2) pays 6 to both; the episode is over
    assert ends["player_0"].heard[-1] == ("stepped", (1, 0, 6.0, True, False, False))
    assert ends["player_1"].heard[-1] == ("stepped", (2, 0, 6.0, True, False, False))
    assert _world_steps(tracer) == [
        {
            "episode": 0,
            "step": 1,
            "agents": ["player-1", "player-2"],
            "states": [0, 0],
            "actions": [1, 2],
            "rewards": [6.0, 6.0],
            "done": True,
        }
    ]


def test_a_choice_that_ends_the_episode_carries_the_next_reset() -> None:
    """Across processes an agent's choice says its next call is .rl_reset (should the step end
    its episode): the world begins the next episode at once, and the step's answer and the
    new episode's first observation go together, with no reset round trip and no deadline."""
    shared, ends, _, timers = _world("climbing_game_v0")
    shared.ask_reset("player_0")
    shared.ask_reset("player_1")
    shared.choose("player_0", 1, then_reset=True)
    shared.choose("player_1", 2, then_reset=True)
    for end in ends.values():
        assert end.heard[1:] == [("stepped", end.heard[1][1]), ("reset taken", None), ("begun", 0)]
    assert shared.episodes == 2 and shared.steps == 1 and not shared.deadline_armed
    shared.choose("player_0", 0)  # no reset with this one (an evaluation is due, say)
    shared.choose("player_1", 0, then_reset=True)
    assert ends["player_1"].heard[-2:] == [("stepped", (0, 0, 11.0, True, False, False)), ("reset taken", None)]
    assert shared.episodes == 2  # the next episode waits for player-1's .rl_reset
    shared.ask_reset("player_0")
    assert shared.episodes == 3 and [e.heard[-1] for e in ends.values()] == [("begun", 0), ("begun", 0)]
    assert not [entry for entry in timers.pending if entry[2]]


@pytest.mark.parametrize("leaves", ["finish", "evaluate"])
def test_an_agent_that_leaves_an_episode_begun_ahead_for_it_is_not_waited_for(leaves: str) -> None:
    """An agent whose .rl_reset the world took with its choice, but whose plan then finishes
    (or evaluates) instead: it sits the episode begun for it out (its seat plays the default
    action) and the other agent's choice steps the world at once, not at a deadline."""
    shared, ends, tracer, timers = _world("climbing_game_v0")
    shared.ask_reset("player_0")
    shared.ask_reset("player_1")
    shared.choose("player_0", 1, then_reset=True)
    shared.choose("player_1", 1, then_reset=True)
    assert shared.episodes == 2
    if leaves == "finish":
        shared.finish("player_0")
    else:
        shared.ask_evaluation("player_0", [0])
    shared.choose("player_1", 2)
    assert shared.steps == 2 and _world_steps(tracer)[-1]["defaulted"] == ["player-1"]
    assert ends["player_1"].heard[-1] == ("stepped", (2, 0, 0.0, True, False, False))
    assert not _late(tracer)


def test_a_missed_deadline_plays_the_default_action_and_says_who() -> None:
    shared, ends, tracer, timers = _world("penalty_game_v0")
    shared.ask_reset("player_0")
    shared.ask_reset("player_1")
    shared.choose("player_0", 2)
    timers.fire()  # player_1 never chose: it plays 0, (2, 0) pays 10
    assert ends["player_1"].heard[-1] == ("stepped", (0, 0, 10.0, True, False, True))
    assert ends["player_0"].heard[-1] == ("stepped", (2, 0, 10.0, True, False, False))
    [step] = _world_steps(tracer)
    assert step["actions"] == [2, 0] and step["defaulted"] == ["player-2"]


def test_a_choice_too_late_for_an_ended_episode_is_dropped() -> None:
    """Across processes a choice can reach the world after the deadline played the default:
    if that step ended the episode, the choice is for no step at all."""
    shared, ends, tracer, timers = _world("climbing_game_v0")
    for seat in ends:
        shared.ask_reset(seat)
    shared.choose("player_0", 0)
    timers.fire()
    shared.choose("player_1", 2)  # arrives late: the episode is over
    assert shared.steps == 1 and len(ends["player_1"].heard) == 2
    for seat in ends:
        shared.ask_reset(seat)
    shared.choose("player_0", 1)
    shared.choose("player_1", 1)
    assert [s["actions"] for s in _world_steps(tracer)] == [[0, 0], [1, 1]]


def test_an_agent_that_finished_leaves_the_others_stepping() -> None:
    shared, ends, _, _ = _world("climbing_game_v0")
    finished: list[bool] = []
    shared.on_finished = lambda: finished.append(True)
    shared.finish("player_1")
    shared.ask_reset("player_0")  # the world no longer waits for player_1
    shared.choose("player_0", 0)  # player_1's seat plays the default action 0: (0, 0) pays 11
    assert ends["player_0"].heard[-1] == ("stepped", (0, 0, 11.0, True, False, False))
    assert ends["player_1"].heard == [] and not finished
    shared.finish("player_0")
    assert finished == [True]


def test_an_agent_that_left_mid_training_no_longer_holds_up_a_barrier(caplog) -> None:
    """An agent whose mind failed (or whose process went offline) while the others wait at a
    barrier: the world finishes its seat, says so once, and the others go on."""
    shared, ends, tracer, _ = _world("climbing_game_v0")
    shared.ask_reset("player_0")  # waits for player_1, which will never ask
    with caplog.at_level("WARNING", logger="bdi_rl.bdi.world"):
        shared.finish("player_1", "its mind failed: no_applicable")
        shared.finish("player_1", "its XMPP session went offline")  # told again: nothing new
    assert ends["player_0"].heard == [("begun", 0)]
    assert shared.left == ["player-2"]
    [warning] = [r.getMessage() for r in caplog.records]
    assert "player-2 left" in warning and "no_applicable" in warning and "default action 0" in warning
    shared.choose("player_0", 0)
    [step] = _world_steps(tracer)
    assert step["defaulted"] == ["player-2"] and step["rewards"] == [11.0, 11.0]
    # an evaluation it will never ask for: the others' is played without waiting for it
    shared.ask_evaluation("player_0", [0])
    assert ends["player_0"].heard[-1][0] == "evaluated"


def test_a_leaving_agent_releases_an_evaluation_the_others_wait_for() -> None:
    shared, ends, _, _ = _world("climbing_game_v0")
    shared.ask_evaluation("player_0", [0])
    assert ends["player_0"].heard == []
    shared.finish("player_1", "its mind failed")
    assert [what for what, _ in ends["player_0"].heard] == ["evaluated"]


def test_evaluation_plays_every_agents_greedy_policy() -> None:
    shared, ends, _, _ = _world("climbing_game_v0")
    shared.ask_evaluation("player_0", [0])
    assert ends["player_0"].heard == []
    shared.ask_evaluation("player_1", [0])
    for end in ends.values():
        [(what, result)] = end.heard
        assert what == "evaluated" and result.mean_return == 11.0 and result.success_rate == 1.0
    shared.ask_evaluation("player_0", [1])
    shared.ask_evaluation("player_1", [2])
    assert ends["player_0"].heard[-1][1].success_rate == 0.0  # (1, 2) = 6 is not the optimum


def test_foraging_steps_trace_positions_and_the_food() -> None:
    shared, ends, tracer, _ = _world("lbforaging_5x5_2p_1f_coop_v0")
    for seat in ends:
        shared.ask_reset(seat)
    for seat in ends:
        shared.choose(seat, 0)  # NONE
    [step] = _world_steps(tracer)
    assert len(step["positions"]) == 2 and all(0 <= v < 5 for xy in step["positions"] for v in xy)
    [[fx, fy, level]] = step["items"]
    assert 1 <= fx <= 3 and 1 <= fy <= 3 and level >= 2
    assert step["rewards"] == [0.0, 0.0] and not step["done"]


# -- every barrier has the deadline ---------------------------------------------------------------


def test_an_episode_begins_without_an_agent_late_for_its_reset(caplog) -> None:
    """The reset barrier's deadline: the episode begins for those who asked; the late seat
    plays the default action all episode (defaulted), says so once, and is traced; its late
    .rl_reset joins the next episode."""
    shared, ends, tracer, timers = _world("climbing_game_v0")
    shared.ask_reset("player_0")
    with caplog.at_level("WARNING", logger="bdi_rl.bdi.world"):
        timers.fire()
    assert ends["player_0"].heard == [("begun", 0)] and ends["player_1"].heard == []
    [warning] = [r.getMessage() for r in caplog.records]
    assert "player-2 missed the 1 s deadline of .rl_reset at joint episode 0" in warning
    assert "the episode begins without it" in warning
    assert _late(tracer) == [{"episode": 0, "call": ".rl_reset", "agents": ["player-2"]}]
    shared.choose("player_0", 0)  # the only one playing: the step is taken at once
    [step] = _world_steps(tracer)
    assert step["defaulted"] == ["player-2"] and step["actions"] == [0, 0]
    assert ends["player_1"].heard == []  # not in that episode: told nothing of it
    shared.ask_reset("player_1")  # late: it joins the next one
    shared.ask_reset("player_0")
    assert ends["player_1"].heard == [("begun", 0)] and shared.episodes == 2


def test_a_reset_asked_during_an_episode_waits_for_the_next_one() -> None:
    shared, ends, _, timers = _world("climbing_game_v0")
    shared.ask_reset("player_0")
    timers.fire()
    shared.ask_reset("player_1")  # the episode runs without it
    assert ends["player_1"].heard == [] and shared.episodes == 1
    shared.choose("player_0", 1)  # the episode ends; player_1 asked already, player_0 asks next
    shared.ask_reset("player_0")
    assert ends["player_1"].heard == [("begun", 0)] and shared.episodes == 2


def test_an_evaluation_goes_on_at_its_deadline_with_the_late_seat_defaulted() -> None:
    shared, ends, tracer, timers = _world("climbing_game_v0")
    shared.ask_evaluation("player_0", [0])
    timers.fire()
    [(what, result)] = ends["player_0"].heard
    assert what == "evaluated" and result.mean_return == 11.0  # player_1 played the default action 0
    assert ends["player_1"].heard == []  # it handed in nothing: no result for it
    assert _late(tracer) == [{"episode": 0, "call": ".rl_evaluate", "agents": ["player-2"]}]
    shared.ask_evaluation("player_1", [1])  # late: the next evaluation, waiting for the others
    timers.fire()
    assert ends["player_1"].heard[-1][0] == "evaluated" and ends["player_1"].heard[-1][1].mean_return == -30.0


def test_a_late_choice_on_its_way_keeps_the_agent_in_the_next_episode() -> None:
    """An agent that missed a step's deadline is busy with the world, not gone: its late
    .rl_act reaching the world makes the reset's deadline wait one more for its .rl_reset."""
    shared, ends, tracer, timers = _world("climbing_game_v0")
    for seat in ends:
        shared.ask_reset(seat)
    shared.choose("player_0", 0)
    timers.fire()  # player_1 missed the step, which ended the episode
    shared.ask_reset("player_0")
    shared.choose("player_1", 2)  # its late choice arrives (dropped)
    timers.fire()  # the reset's deadline: player_1 has called since it started
    assert shared.episodes == 1 and [e["call"] for e in _late(tracer)] == [".rl_act"]
    shared.ask_reset("player_1")
    assert shared.episodes == 2 and ends["player_1"].heard[-1] == ("begun", 0)


def test_an_agent_that_sat_an_episode_out_trains_it_alone_and_the_evaluation_waits() -> None:
    """Seats get out of step when one sat an episode out: it has one more to train when the
    others ask for their final evaluation. The episode does not wait for agents waiting for
    an evaluation, and the evaluation waits for an agent still training (it calls the world),
    so every policy is in it."""
    shared, ends, _, timers = _world("climbing_game_v0")
    shared.ask_reset("player_0")
    timers.fire()  # player_1 sits the first episode out
    shared.ask_reset("player_1")
    shared.choose("player_0", 0)
    shared.ask_evaluation("player_0", [0])  # its training is over
    assert ends["player_1"].heard == [("begun", 0)]  # its own last episode, alone
    shared.choose("player_1", 0)
    timers.fire()  # the evaluation's deadline: player_1 is busy training, it waits on
    assert [what for what, _ in ends["player_0"].heard] == ["begun", "stepped"]
    shared.ask_evaluation("player_1", [0])
    for end in ends.values():
        what, result = end.heard[-1]
        assert what == "evaluated" and result.mean_return == 11.0  # both policies played


def test_a_seat_that_keeps_missing_deadlines_is_finished_as_stuck(caplog) -> None:
    """After STUCK_AFTER deadlines missed in a row with no call in between the world stops
    waiting a deadline at every barrier: the seat is finished (seats_left); a later call
    of its agent is refused, naming why."""
    shared, ends, tracer, timers = _world("climbing_game_v0")
    with caplog.at_level("WARNING", logger="bdi_rl.bdi.world"):
        for _ in range(STUCK_AFTER):
            shared.ask_reset("player_0")
            timers.fire()
            shared.choose("player_0", 0)
    assert shared.left == ["player-2"]
    assert [e.get("stuck") for e in _late(tracer)] == [None] * (STUCK_AFTER - 1) + [["player-2"]]
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2 and "missed the 1 s deadline" in messages[0]  # one warning a minute
    assert "player-2 left at joint episode 2 (stuck: it missed 3 deadlines of 1 s in a row" in messages[1]
    shared.ask_reset("player_0")  # no deadline to wait any more
    assert shared.episodes == STUCK_AFTER + 1 and not timers.pending[-1][2]
    [(what, why)] = ends["player_1"].heard  # told at once, should its agent ever wake up
    assert what == "refused" and why.startswith("the world finished its seat player_1: stuck: it missed 3")
    shared.ask_reset("player_1")  # ... and at every call
    assert ends["player_1"].heard[-1] == ("refused", why)


def test_a_call_between_missed_deadlines_keeps_the_seat() -> None:
    """A slow agent is not a stuck one: a late call starts its count over."""
    shared, ends, _, timers = _world("climbing_game_v0")
    for _ in range(2 * STUCK_AFTER):
        shared.ask_reset("player_0")
        shared.ask_reset("player_1")
        shared.choose("player_0", 0)
        timers.fire()  # player_1 misses the step
        shared.choose("player_1", 0)  # ... and calls late: dropped, but it is alive
    assert shared.left == [] and shared.episodes == 2 * STUCK_AFTER


def test_an_agent_not_heard_from_yet_is_waited_for_and_an_offline_one_not_counted() -> None:
    """Across processes: a seat whose agent the world never heard from is still starting, so
    the first episode waits for it; an agent offline (within its grace) is not stuck."""
    shared, ends, _, timers = _world("climbing_game_v0")
    shared.seats["player_1"].heard = False
    shared.ask_reset("player_0")
    timers.fire()
    assert shared.episodes == 0 and ends["player_0"].heard == []
    shared.ask_reset("player_1")
    assert shared.episodes == 1
    shared.set_offline("player_1", True)
    for _ in range(STUCK_AFTER + 1):
        shared.choose("player_0", 0)
        shared.ask_reset("player_0")
        timers.fire()
    assert shared.left == [] and shared.seats["player_1"].missed == 0


def test_what_the_world_waits_for_names_the_agents_and_calls() -> None:
    shared, _, _, _ = _world("climbing_game_v0")
    assert shared.waiting_for() == "waits for player-1's .rl_reset, player-2's .rl_reset"
    shared.ask_reset("player_0")
    assert shared.waiting_for() == "waits for player-2's .rl_reset" and shared.deadline_armed
    shared.ask_reset("player_1")
    shared.choose("player_1", 0)
    assert shared.waiting_for() == "waits for player-1's .rl_act"


def _seated_mind(tmp_path: Path, plans: str) -> tuple[Any, SharedWorld, Recorded, Timers]:
    """A real mind at player_0's seat of an in-process climbing world (player_1's end records)."""
    from bdi_rl.bdi.episode import EpisodeSession, Percepts
    from bdi_rl.bdi.mind import load_mind
    from bdi_rl.bdi.runtime import Actions
    from bdi_rl.bdi.seat import SeatClient
    from bdi_rl.rl.qlearning import LearningConfig, QLearner

    shared, ends, tracer, timers = _world("climbing_game_v0")
    seat = shared.world.seats["player_0"]
    session = EpisodeSession(
        seat,
        QLearner(seat.n_states, seat.n_actions, LearningConfig(), seed=0),
        Tracer("run", "player-1@localhost", TraceLevel.STEP),
        Percepts(),
        episodes=5,
        eval_episodes=1,
        seed=0,
    )
    client = SeatClient(seat, session)
    client.port = shared
    shared.seat("player_0", "player-1", client)
    actions = Actions()
    client.register(actions)
    (tmp_path / "p.asl").write_text(plans)
    session.percepts.mind = mind = load_mind(tmp_path / "p.asl", actions, "player-1")
    return mind, shared, ends["player_1"], timers


def test_a_call_to_the_world_is_held_by_the_mind_and_fails_when_the_world_is_gone(tmp_path) -> None:
    """A suspended .rl_* is an intention the mind holds (so it is alive, cannot act by itself,
    and says what it waits for); when the world will never answer, the action fails and the
    plan's failure handling applies."""
    from bdi_rl.bdi.mind import alive, can_act, describe_waits

    mind, shared, _, _ = _seated_mind(
        tmp_path,
        """
!go.
@go +!go <- .rl_reset; .rl_act(0); +acted.
@gone -!go[error_msg(M)] <- +failed(M).
""",
    )
    mind.run(sleep=False)
    assert alive(mind) and not can_act(mind)
    assert describe_waits(mind) == ["waits for the world's .rl_reset"]
    shared.ask_reset("player_1")  # the barrier completes: the held intention goes on
    mind.run(sleep=False)
    assert describe_waits(mind) == ["waits for the world's .rl_act"]
    shared.seats["player_0"].end.world_gone("the world agent world@x went offline")  # type: ignore[attr-defined]
    mind.run(sleep=False)
    assert mind.believes('failed("the world agent world@x went offline")') and not mind.believes("acted")
    assert not mind.held and not alive(mind)


def test_a_stuck_agents_next_call_fails_naming_why(tmp_path) -> None:
    """An agent whose mind has not called the world for STUCK_AFTER deadlines (here it has
    not run at all) is finished as stuck; once it runs, its call fails naming why."""
    mind, shared, _, timers = _seated_mind(tmp_path, "!go.\n@go +!go <- .rl_reset.\n")
    for _ in range(STUCK_AFTER):
        shared.ask_reset("player_1")
        timers.fire()
        shared.choose("player_1", 0)
    assert shared.left == ["player-1"]
    mind.run(sleep=False)
    [failure] = mind.host.failures
    assert failure.endswith(
        "p.asl:2: the world finished its seat player_0: stuck: it missed 3 deadlines of 1 s "
        "in a row, the last at .rl_reset, with no call to the world in between"
    )


# -- the spec ---------------------------------------------------------------------------------

WORLD_SPEC = """
name = "w"
episodes = 10
[env]
id = "climbing_game_v0"
[world]
{world}
[[agents]]
name = "p"
count = 2
{group}
"""


@pytest.mark.parametrize(
    "world, group, message",
    [
        (
            'bind = { player_0 = "p-1", player_9 = "p-2" }',
            "",
            "world.bind.player_9: the world has no agent 'player_9' (its agents: player_0, player_1)",
        ),
        ('bind = { player_0 = "p-1", player_1 = "q" }', "", "world.bind.player_1: 'q' is not a learner of this spec"),
        ('bind = { player_0 = "p-1", player_1 = "p-1" }', "", "'p-1' is bound to more than one seat"),
        ('bind = { player_0 = "p-1" }', "", "world.bind: learner 'p-2' has no seat"),
        ("", 'mode = "episode"', "agents[0].mode: agents of a shared world act step by step"),
        ("default_action = 3", "", "world.default_action: 3 is not an action of player_0 (0..2)"),
        ('name = "p-1"', "", "world.name: 'p-1' is also an agent's name"),
        ("step_deadline_ms = 0", "", "world.step_deadline_ms: expected an integer >= 1"),
    ],
    ids=["unknown seat", "not a learner", "twice", "unseated", "episode mode", "default action", "name", "deadline"],
)
def test_world_specs_are_checked_before_anything_starts(tmp_path, world, group, message) -> None:
    spec = tmp_path / "w.toml"
    spec.write_text(WORLD_SPEC.format(world=world, group=group))
    with pytest.raises(SpecError) as info:
        prepare_experiment(load_spec(spec))
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_world_id_without_a_world_table_is_refused(tmp_path) -> None:
    spec = tmp_path / "w.toml"
    spec.write_text(WORLD_SPEC.format(world="", group="").replace("[world]\n", ""))
    with pytest.raises(SpecError, match=r"env.id: 'climbing_game_v0' is a multi-agent world: add a \[world\] table"):
        load_spec(spec)


def test_the_cli_refuses_a_bad_world_with_one_line_and_creates_nothing(tmp_path) -> None:
    spec = tmp_path / "w.toml"
    spec.write_text(WORLD_SPEC.format(world="default_action = 7", group=""))
    result = run_cli("run", str(spec), "--runs", str(tmp_path / "runs"), "--no-progress")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "world.default_action: 7" in result.stderr and not (tmp_path / "runs").exists()


# -- whole runs -------------------------------------------------------------------------------


def _summary(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("game, optimum", [("climbing", 11.0), ("penalty", 10.0)])
@pytest.mark.parametrize("seed", [0, 7, 42])
def test_coordination_plans_find_the_optimum(tmp_path, game, optimum, seed) -> None:
    """CI's check of the benchmark (BENCHMARKS.md, "Shared worlds"): the shipped specs, whose
    plans agree on the best joint action seen, reach the optimum's greedy joint action."""
    runs = tmp_path / "runs"
    result = run_cli("run", game, "--runs", str(runs), "--no-progress", "--seed", str(seed), "--trace", "episode")
    assert result.returncode == 0, result.stderr
    summary = _summary(run_named(runs, game))
    for name in ("player-1", "player-2"):
        assert summary["agents"][name]["eval"] == {"episodes": 1, "mean_return": optimum, "success_rate": 1.0}
    assert summary["agents"]["world"] == {"role": "world", "episodes": 1000, "joint_steps": 1000}


@pytest.mark.slow
def test_independent_learners_miss_the_climbing_optimum(tmp_path) -> None:
    """The baseline the plans beat: the same learners with learner.asl (no agreement) settle
    on a safe joint action on these seeds."""
    text = (ROOT / "agents" / "climbing.toml").read_text().replace('asl = "coordinated-learner.asl"\n', "")
    spec = tmp_path / "independent.toml"
    spec.write_text(text.replace('name = "climbing"', 'name = "independent"'))
    missed = 0
    for seed in (0, 1, 2):
        runs = tmp_path / f"runs-{seed}"
        result = run_cli(
            "run", str(spec), "--runs", str(runs), "--no-progress", "--seed", str(seed), "--trace", "episode"
        )
        assert result.returncode == 0, result.stderr
        missed += _summary(run_named(runs, "independent"))["agents"]["player-1"]["eval"]["success_rate"] == 0.0
    assert missed >= 2


@pytest.mark.slow
def test_the_trace_shows_each_joint_step_and_who_proposed_what(tmp_path) -> None:
    runs = tmp_path / "runs"
    result = run_cli("run", "climbing", "--runs", str(runs), "--no-progress", "--episodes", "200")
    assert result.returncode == 0, result.stderr
    events = read_trace(run_named(runs, "climbing") / "trace.jsonl")
    steps = [e["data"] for e in events if e["kind"] == WORLD_STEP]
    assert len(steps) == 200 and [s["episode"] for s in steps] == list(range(200))
    assert all(s["agents"] == ["player-1", "player-2"] and s["done"] for s in steps)
    # each agent's learner updated from its own part of each joint step: its rl.step rows
    for k, name in enumerate(("player-1", "player-2")):
        moves = [
            (e["data"]["a"], e["data"]["r"])
            for e in events
            if e["agent"] == f"{name}@localhost" and e["kind"] == "rl.step"
        ]
        assert moves == [(s["actions"][k], s["rewards"][k]) for s in steps]
    # the leader proposed, the follower accepted, through their plans
    proposals = [e for e in events if e["kind"] == "msg.recv" and e["data"]["content"].startswith("adopt(")]
    assert proposals and all(e["agent"] == "player-2@localhost" for e in proposals)
    assert any(
        e["kind"] == "intention.start" and e["data"]["plan"].startswith("adopt_better")
        for e in events
        if e["agent"] == "player-2@localhost"
    )
    accepted = [e for e in events if e["kind"] == "msg.recv" and e["data"]["content"].startswith("accepted(")]
    assert [e["data"]["content"][len("accepted") :] for e in accepted] == [
        e["data"]["content"][len("adopt") :] for e in proposals
    ]
    for name in ("player-1", "player-2", "world"):
        seqs = line_seqs(events, f"{name}@localhost")
        assert seqs == list(range(len(seqs)))


@pytest.mark.slow
def test_a_late_agent_plays_the_default_action_and_the_run_goes_on(tmp_path) -> None:
    """A fault injected through the plans: player-2 waits 300 ms before some of its moves,
    the world waits 200 ms; its missed steps are played with action 0 and traced. (Silent
    for fewer than STUCK_AFTER deadlines, it is late, not stuck: it keeps its seat.)"""
    asl = tmp_path / "late.asl"
    asl.write_text(
        (ROOT / "asl" / "learner.asl")
        .read_text()
        .replace(
            '{ include("lib/episode.asl") }',
            """@episode
+!episode <- .rl_reset; while (not outcome(_)) { !navigate }; .rl_end_episode.
@navigate
+!navigate : state(S) & episode(E) <-
    .rl_choose(S, A);
    .my_name(Me);
    if (Me == "player-2@localhost" & E mod 4 == 1) { .wait(300) };
    .rl_act(A).""",
        )
        .replace('{ include("lib/lifecycle.asl") }', f'{{ include("{ROOT}/asl/lib/lifecycle.asl") }}')
    )
    text = (ROOT / "agents" / "climbing.toml").read_text()
    text = text.replace("[world]\n", "[world]\nstep_deadline_ms = 200\n").replace("episodes = 1000", "episodes = 20")
    text = text.replace('asl = "coordinated-learner.asl"', f'asl = "{asl}"')
    spec = tmp_path / "late.toml"
    spec.write_text(text)
    runs = tmp_path / "runs"
    result = run_cli("run", str(spec), "--runs", str(runs), "--no-progress")
    assert result.returncode == 0, result.stderr
    events = read_trace(run_named(runs, "climbing") / "trace.jsonl")
    steps = [e["data"] for e in events if e["kind"] == WORLD_STEP]
    late = [s for s in steps if "defaulted" in s]
    assert late and all(s["defaulted"] == ["player-2"] and s["actions"][1] == 0 for s in late)
    assert _summary(run_named(runs, "climbing"))["agents"]["world"]["episodes"] >= 20
    assert "seats_left" not in _summary(run_named(runs, "climbing"))["agents"]["world"]


@pytest.mark.slow
def test_a_shared_world_across_processes_over_ejabberd(ejabberd, tmp_path) -> None:
    """The world agent, each player and telemetry in four processes: every call between a
    player and the world is an XMPP message; the coordination plans still find the optimum."""
    run_dir = across_processes(
        ejabberd.port, tmp_path, ROOT / "agents" / "penalty.toml", "player-1", "world", "player-2"
    )
    summary = _summary(run_dir)
    assert summary["agents"]["world"] == {"role": "world", "episodes": 1000, "joint_steps": 1000}
    for name in ("player-1", "player-2"):
        assert summary["agents"][name]["eval"]["success_rate"] == 1.0
    events = read_trace(run_dir / "trace.jsonl")
    assert_every_event_once(events, ["player-1", "player-2", "world"])
    assert sum(e["kind"] == WORLD_STEP for e in events) == 1000


@pytest.mark.slow
def test_shared_world_messages_from_a_stranger_are_dropped(ejabberd, tmp_path) -> None:
    """A client that is no agent of the run sends the world agent a choice for player-1's seat
    and player-1 a forged transition and episode start, mid-run: the world and the player each
    drop them with one warning naming the sender, and the run ends as if they were never sent
    (every joint step the world took is one both learners took, no deadline missed)."""
    import asyncio
    import subprocess

    from spade.agent import Agent

    from bdi_rl.xmpp.worldlink import world_stanza
    from tests.test_processes import _kill_running, _start

    text = (ROOT / "agents" / "climbing.toml").read_text().replace("episodes = 1000", "episodes = 1500")
    text = text.replace('trace = "step"', 'trace = "episode"')
    text = text.replace('asl = "coordinated-learner.asl"', f'asl = "{ROOT / "asl" / "coordinated-learner.asl"}"')
    spec = tmp_path / "climbing.toml"
    spec.write_text(text)
    env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "pw"}
    common = ("--xmpp", f"localhost:{ejabberd.port}", "--runs", str(tmp_path / "runs"))
    world = _start("agent", str(spec), "--name", "world", *common, env=env)
    players = _start("agent", str(spec), "--name", "player", *common, env=env)  # both seats in one process
    telemetry = _start("telemetry", str(spec), *common, env=env)

    stranger_name = f"stranger-{uuid.uuid4().hex[:8]}"  # the session's ejabberd has other tests' accounts

    async def forge() -> None:
        stranger = Agent(f"{stranger_name}@localhost", "pw", port=ejabberd.port, verify_security=False)
        await stranger.start(auto_register=True)
        try:
            send = stranger.client.send_raw
            send(world_stanza("world@localhost", [{"op": "act", "seat": "player_0", "a": 2, "then": 1}]))
            send(world_stanza("world@localhost", [{"op": "finish", "seat": "player_1", "why": "forged"}]))
            forged = [{"op": "stepped", "a": 0, "s2": 0, "r": 11.0, "term": True, "trunc": False}]
            send(world_stanza("player-1@localhost", [*forged, {"op": "begun", "s": 0}]))
            await asyncio.sleep(1.0)  # delivered before the session ends
        finally:
            await stranger.stop()

    try:
        deadline = time.monotonic() + 120
        started = False
        while not started and time.monotonic() < deadline:  # the players are well into training
            traces = list((tmp_path / "runs").glob("*/trace.jsonl"))
            lines = traces[0].read_bytes().splitlines() if traces else []
            started = sum(b'"kind":"episode.end"' in line for line in lines) >= 100
            time.sleep(0.1)
        assert started, "the players did not get going"
        asyncio.run(forge())
        _, world_err = world.communicate(timeout=240)
        _, players_err = players.communicate(timeout=60)
        assert world.returncode == 0 and players.returncode == 0, world_err + players_err
        out, err = telemetry.communicate(timeout=60)
        assert telemetry.returncode == 0, err
    finally:
        _kill_running(world, players, telemetry)
        try:
            telemetry.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    refused = f"refused a shared-world message from {stranger_name}@localhost"
    assert world_err.count(refused) == 1 and "does not play the seat 'player_0'" in world_err, world_err
    assert players_err.count(refused) == 1 and "is not this agent's world" in players_err, players_err
    summary = _summary(Path(out.strip().splitlines()[-1]))
    assert summary["agents"]["world"] == {"role": "world", "episodes": 1500, "joint_steps": 1500}
    for name in ("player-1", "player-2"):
        assert summary["agents"][name]["episodes"] == 1500 and "failure" not in summary["agents"][name]
    events = read_trace(Path(out.strip().splitlines()[-1]) / "trace.jsonl")
    assert not [e for e in events if e["kind"] == WORLD_LATE]


@pytest.mark.slow
def test_a_request_lost_on_its_way_to_the_world_is_sent_again(ejabberd, tmp_path) -> None:
    """XMPP may lose a message without a bounce (a session ending as it reaches it). Here an
    old session of the world's JID (a bare client, not bdi-rl's code, at a higher priority,
    so the server gives it every message to the world's bare JID) swallows the players'
    first ``.rl_reset`` requests, then ends. Before, the world never heard of them and
    waited for them as for agents still starting, while they waited for the world: the run
    hung for good. Now a request unanswered for 2 s goes again, and the run finishes, every
    joint step once."""
    import asyncio
    import subprocess

    from bdi_rl.xmpp.worldlink import WORLD_NS
    from tests.rawxmpp import RawXmppClient
    from tests.test_processes import _kill_running, _start

    text = (ROOT / "agents" / "climbing.toml").read_text().replace("episodes = 1000", "episodes = 300")
    text = text.replace('trace = "step"', 'trace = "episode"').replace("epsilon_decay_episodes = 800", "")
    text = text.replace('asl = "coordinated-learner.asl"', f'asl = "{ROOT / "asl" / "learner.asl"}"')
    text = text.replace('name = "climbing"', f'name = "lost-{uuid.uuid4().hex[:6]}"')
    spec = tmp_path / "climbing.toml"
    spec.write_text(text)
    env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "pw"}
    common = ("--xmpp", f"localhost:{ejabberd.port}", "--runs", str(tmp_path / "runs"))
    mark = f"{{{WORLD_NS}}}world"

    async def run() -> tuple[int, list[Any]]:
        old = RawXmppClient(ejabberd.port)
        await old.connect()
        await old.register("world", "pw")  # (a conflict when another test made the account)
        await old.close()
        old = RawXmppClient(ejabberd.port)
        await old.connect()
        if not await old.login("world", "pw"):
            raise AssertionError("the old session could not log in as world@localhost")
        old.send("<presence><priority>50</priority></presence>")
        procs = [
            _start("telemetry", str(spec), *common, env=env),
            _start("agent", str(spec), "--name", "world", *common, env=env),
            _start("agent", str(spec), "--name", "player", *common, env=env),  # both seats in one process
        ]
        swallowed = 0
        try:
            while swallowed < 2:  # each player's .rl_reset, never answered
                element = await old.take("{jabber:client}message", timeout=60)
                assert element is not None, "no request reached the old session"
                swallowed += element.find(mark) is not None
            await old.close()  # the old session ends; the requests are gone with it
            loop = asyncio.get_running_loop()
            outcomes = [await loop.run_in_executor(None, lambda p=p: p.communicate(timeout=90)) for p in procs]
        except subprocess.TimeoutExpired:
            raise AssertionError("the run hung: the lost requests were never sent again") from None
        finally:
            _kill_running(*procs)
        for proc, (_, err) in zip(procs, outcomes, strict=True):
            assert proc.returncode == 0, err
        return swallowed, outcomes

    swallowed, outcomes = asyncio.run(run())
    assert swallowed >= 2
    run_dir = Path(outcomes[0][0].strip().splitlines()[-1])
    summary = _summary(run_dir)
    assert summary["agents"]["world"] == {"role": "world", "episodes": 300, "joint_steps": 300}
    for name in ("player-1", "player-2"):
        assert summary["agents"][name]["episodes"] == 300 and "failure" not in summary["agents"][name]
    assert not [e for e in read_trace(run_dir / "trace.jsonl") if e["kind"] == WORLD_LATE]


@pytest.mark.slow
def test_a_world_goes_on_when_an_agent_process_dies(ejabberd, tmp_path) -> None:
    """player-2's process is killed mid-run (SIGKILL: no goodbye). The server ends its session,
    the world hears it went offline (the directed presence the agent sent it), waits
    offline_grace_ms, finishes its seat and says so; player-1 trains to the end, its partner's
    seat playing the default action, instead of waiting forever at the next reset."""
    import signal
    import subprocess

    from tests.test_processes import _kill_running, _start

    text = (ROOT / "agents" / "climbing.toml").read_text().replace("episodes = 1000", "episodes = 3000")
    text = text.replace('trace = "step"', 'trace = "episode"').replace(
        "[world]\n", "[world]\noffline_grace_ms = 1000\n"
    )
    text = text.replace('asl = "coordinated-learner.asl"', f'asl = "{ROOT / "asl" / "coordinated-learner.asl"}"')
    spec = tmp_path / "climbing.toml"
    spec.write_text(text)
    env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "pw"}
    common = ("--xmpp", f"localhost:{ejabberd.port}", "--runs", str(tmp_path / "runs"))
    procs = {
        name: _start("agent", str(spec), "--name", name, *common, env=env) for name in ("world", "player-1", "player-2")
    }
    telemetry = _start("telemetry", str(spec), *common, env=env)
    try:
        deadline = time.monotonic() + 120
        ended = 0
        while ended < 100 and time.monotonic() < deadline:  # player-2 well into training
            traces = list((tmp_path / "runs").glob("*/trace.jsonl"))
            lines = traces[0].read_bytes().splitlines() if traces else []
            ended = sum(b'"player-2@localhost"' in line and b'"kind":"episode.end"' in line for line in lines)
            time.sleep(0.2)
        assert ended >= 100, "player-2 did not get going"
        procs["player-2"].send_signal(signal.SIGKILL)
        for name in ("world", "player-1"):
            _, err = procs[name].communicate(timeout=240)
            assert procs[name].returncode == 0, err
            if name == "world":
                assert "player-2 left at joint episode" in err and "went offline" in err
    finally:
        _kill_running(*procs.values(), telemetry)
        try:
            telemetry.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    (trace,) = (tmp_path / "runs").glob("*/trace.jsonl")
    events = read_trace(trace)
    stops = {e["agent"]: e["data"] for e in events if e["kind"] == "agent.stop"}
    assert stops["world@localhost"]["seats_left"] == ["player-2"]
    assert stops["world@localhost"]["joint_episodes"] == 3000
    assert stops["player-1@localhost"]["reason"] == "finished"
    assert "player-2@localhost" not in stops


@pytest.mark.slow
def test_players_fail_in_one_line_when_the_world_process_dies(ejabberd, tmp_path) -> None:
    """The world agent's process is killed mid-run (SIGKILL). Each player watches the world's
    presence (the world sent it directed presence), waits offline_grace_ms, then its
    suspended .rl_* call fails naming the world: the plan's failure handling applies (here
    none: the agent fails) and the player's process exits 1 with one line, in seconds."""
    import signal

    from tests.test_processes import _kill_running, _start

    text = (ROOT / "agents" / "climbing.toml").read_text().replace("episodes = 1000", "episodes = 100000")
    text = text.replace('trace = "step"', 'trace = "episode"').replace(
        "[world]\n", "[world]\noffline_grace_ms = 1000\n"
    )
    text = text.replace('asl = "coordinated-learner.asl"', f'asl = "{ROOT / "asl" / "coordinated-learner.asl"}"')
    spec = tmp_path / "climbing.toml"
    spec.write_text(text)
    env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "pw"}
    common = ("--xmpp", f"localhost:{ejabberd.port}", "--runs", str(tmp_path / "runs"))
    procs = {
        name: _start("agent", str(spec), "--name", name, *common, env=env) for name in ("world", "player-1", "player-2")
    }
    telemetry = _start("telemetry", str(spec), *common, env=env)
    try:
        deadline = time.monotonic() + 120
        ended = 0
        while ended < 50 and time.monotonic() < deadline:  # well into training
            traces = list((tmp_path / "runs").glob("*/trace.jsonl"))
            lines = traces[0].read_bytes().splitlines() if traces else []
            ended = sum(b'"player-1@localhost"' in line and b'"kind":"episode.end"' in line for line in lines)
            time.sleep(0.2)
        assert ended >= 50, "the players did not get going"
        procs["world"].send_signal(signal.SIGKILL)
        killed = time.monotonic()
        for name in ("player-1", "player-2"):
            _, err = procs[name].communicate(timeout=60)
            assert procs[name].returncode == 1, err
            lines = [line for line in err.splitlines() if line.startswith("bdi-rl:")]
            assert lines == [line for line in err.splitlines() if not line.startswith("WARNING")], err
            [line] = lines
            assert line.startswith(f"bdi-rl: agent {name}@localhost failed: "), err
            assert "the world agent world@localhost went offline and did not come back within 1 s" in line
        assert time.monotonic() - killed < 30
    finally:
        _kill_running(*procs.values(), telemetry)
    (trace,) = (tmp_path / "runs").glob("*/trace.jsonl")
    stops = {e["agent"]: e["data"] for e in read_trace(trace) if e["kind"] == "agent.stop"}
    for name in ("player-1", "player-2"):
        assert "the world agent world@localhost went offline" in stops[f"{name}@localhost"]["reason"]


CONSENSUS = """
name = "consensus"
seed = 0
episodes = 300
eval_episodes = 1
trace = "episode"

[env]
id = "consensus_game_v0"
kwargs = {{ n = 3, actions = 2 }}

[world]
step_deadline_ms = 500

[[agents]]
name = "player"
count = 3
asl = "{asl}"
"""


@pytest.mark.slow
def test_a_stopped_player_is_finished_as_stuck_and_the_world_goes_on_at_full_speed(ejabberd, tmp_path) -> None:
    """One player of three is stopped with SIGSTOP (its session stays up: no presence says
    it is gone). The world goes on at each barrier's deadline, reset included, and after
    STUCK_AFTER deadlines in a row finishes its seat as stuck instead of waiting a deadline
    at every barrier; the others train to the end. Woken up, the stopped player's next call
    is refused: it fails in one line naming why, and the run's summary is written."""
    import signal

    from tests.test_processes import _kill_running, _start

    spec = tmp_path / "consensus.toml"
    spec.write_text(CONSENSUS.format(asl=ROOT / "asl" / "learner.asl"))
    env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "pw"}
    common = ("--xmpp", f"localhost:{ejabberd.port}", "--runs", str(tmp_path / "runs"))
    names = ("world", "player-1", "player-2", "player-3")
    procs = {name: _start("agent", str(spec), "--name", name, *common, env=env) for name in names}
    telemetry = _start("telemetry", str(spec), *common, env=env)
    try:
        deadline = time.monotonic() + 120
        ended = 0
        while ended < 20 and time.monotonic() < deadline:
            traces = list((tmp_path / "runs").glob("*/trace.jsonl"))
            lines = traces[0].read_bytes().splitlines() if traces else []
            ended = sum(b'"player-3@localhost"' in line and b'"kind":"episode.end"' in line for line in lines)
            time.sleep(0.1)
        assert ended >= 20, "player-3 did not get going"
        procs["player-3"].send_signal(signal.SIGSTOP)
        stopped = time.monotonic()
        for name in ("player-1", "player-2", "world"):
            _, err = procs[name].communicate(timeout=120)
            assert procs[name].returncode == 0, err
        seconds = time.monotonic() - stopped
        assert "player-3 left at joint episode" in err and "stuck: it missed 3 deadlines of 0.5 s in a row" in err
        procs["player-3"].send_signal(signal.SIGCONT)
        _, err = procs["player-3"].communicate(timeout=60)
        assert procs["player-3"].returncode == 1, err
        lines = [line for line in err.splitlines() if not line.startswith("WARNING")]
        assert len(lines) == 1, err
        assert lines[0].startswith("bdi-rl: agent player-3@localhost failed: ") and "stuck" in lines[0], err
        out, err = telemetry.communicate(timeout=60)
        # the run's exit status, as compose reports it: one agent failed, and telemetry names it
        assert telemetry.returncode == 1 and "agent player-3 failed:" in err and "stuck" in err, err
    finally:
        _kill_running(*procs.values(), telemetry)
    # 280 episodes at one deadline (or two) each would take minutes; at full speed, seconds
    assert seconds < 60
    run_dir = Path(out.strip().splitlines()[-1])
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["agents"]["world"]["seats_left"] == ["player-3"]
    assert summary["agents"]["world"]["episodes"] >= 300
    events = read_trace(run_dir / "trace.jsonl")
    late = [e["data"] for e in events if e["kind"] == WORLD_LATE]
    assert 3 <= len(late) <= 4 and late[-1]["stuck"] == ["player-3"]
    assert all(e["agents"] == ["player-3"] for e in late)
    stops = {e["agent"]: e["data"]["reason"] for e in events if e["kind"] == "agent.stop"}
    assert stops["player-1@localhost"] == stops["player-2@localhost"] == "finished"


def _small_foraging(tmp_path: Path) -> Path:
    """agents/foraging.toml cut to 20 episodes, evaluating every 10 (5 greedy episodes)."""
    text = (ROOT / "agents" / "foraging.toml").read_text()
    text = text.replace("episodes = 3000", "episodes = 20").replace("eval_episodes = 100", "eval_episodes = 5")
    text = text.replace("eval_every = 500", "eval_every = 10").replace(
        'asl = "forager.asl"', f'asl = "{ROOT / "asl" / "forager.asl"}"'
    )
    spec = tmp_path / "foraging.toml"
    spec.write_text(text)
    return spec


def _check_foraging_trace(events: list[dict]) -> None:
    steps = [e["data"] for e in events if e["kind"] == WORLD_STEP]
    assert steps and max(s["episode"] for s in steps) == 19
    assert all(len(s["positions"]) == 2 and (s["items"] or s["done"]) for s in steps)
    for name in ("forager-1", "forager-2"):
        evals = [e["data"] for e in events if e["agent"] == f"{name}@localhost" and e["kind"] == "eval"]
        assert [e["after_episodes"] for e in evals] == [10, 20] and all(e["episodes"] == 5 for e in evals)
        ends = [e for e in events if e["agent"] == f"{name}@localhost" and e["kind"] == "episode.end"]
        assert len(ends) == 20
    _check_learners_episodes_are_the_worlds(events, ["forager-1", "forager-2"])
    # both foragers perceived where the food and the partner were, each from its own side
    seen = {
        e["agent"]: e["data"]["belief"]
        for e in events
        if e["kind"] == "belief.add" and e["data"]["belief"].startswith("partner(")
    }
    assert set(seen) == {"forager-1@localhost", "forager-2@localhost"}


def _check_learners_episodes_are_the_worlds(events: list[dict], names: list[str]) -> None:
    """Episode boundaries: each learner's episodes are the world's joint episodes, step for
    step (same number, length and return), and no barrier waited for a deadline."""
    world: dict[int, list[dict]] = {}
    for e in events:
        if e["kind"] == WORLD_STEP:
            world.setdefault(e["data"]["episode"], []).append(e["data"])
    assert world and all(steps[-1]["done"] for steps in world.values())
    for i, name in enumerate(names):
        ends = [e for e in events if e["agent"] == f"{name}@localhost" and e["kind"] == "episode.end"]
        assert [e["episode"] for e in ends] == sorted(world)
        for end in ends:
            steps = world[end["episode"]]
            assert end["data"]["length"] == len(steps)
            assert end["data"]["return"] == pytest.approx(sum(step["rewards"][i] for step in steps))
    assert not [e for e in events if e["kind"] == WORLD_LATE]


@pytest.mark.slow
def test_foraging_evaluates_every_ten_episodes_in_one_process(tmp_path) -> None:
    runs = tmp_path / "runs"
    result = run_cli("run", str(_small_foraging(tmp_path)), "--runs", str(runs), "--no-progress")
    assert result.returncode == 0, result.stderr
    _check_foraging_trace(read_trace(run_named(runs, "foraging") / "trace.jsonl"))


@pytest.mark.slow
def test_foraging_across_processes_over_ejabberd(ejabberd, tmp_path) -> None:
    run_dir = across_processes(ejabberd.port, tmp_path, _small_foraging(tmp_path), "world", "forager")
    events = read_trace(run_dir / "trace.jsonl")
    assert_every_event_once(events, ["forager-1", "forager-2", "world"])
    _check_foraging_trace(events)


def aec_climbing() -> object:
    """The climbing game as a PettingZoo AEC env (for the test below, by entry point)."""
    from pettingzoo.utils.conversions import parallel_to_aec

    from bdi_rl.rl.matrixgames import ClimbingGame

    return parallel_to_aec(ClimbingGame())


def test_an_aec_env_is_played_through_pettingzoos_own_conversion() -> None:
    shared, ends, tracer, _ = _world("tests.test_world_shared:aec_climbing")
    for seat in ends:
        shared.ask_reset(seat)
    shared.choose("player_0", 0)
    shared.choose("player_1", 0)
    assert [end.heard[-1] for end in ends.values()] == [("stepped", (0, 0, 11.0, True, False, False))] * 2


@pytest.mark.parametrize(
    "env_id, message",
    [
        (
            "tests.test_world_shared:nothing_here",
            'module "tests.test_world_shared" has no class or factory "nothing_here"',
        ),
        (
            "tests.test_world_shared:Recorded",
            "the entry point returned Recorded, not a PettingZoo ParallelEnv or AECEnv",
        ),
        ("FrozenLake-v1", "not a shipped world (climbing_game_v0, penalty_game_v0, consensus_game_v0"),
        ("lbforaging_5x5_2p_1f_coop_v0", "cannot be made with kwargs {'size': 9}"),
    ],
)
def test_a_world_that_cannot_be_made_is_one_line_naming_it(env_id, message) -> None:
    from bdi_rl.rl.envs import EnvError

    with pytest.raises(EnvError) as info:
        make_world(env_id, {"size": 9} if env_id.startswith("lbf") else {})
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_plan_may_call_the_worlds_actions_from_more_than_one_place(tmp_path) -> None:
    """Each line that calls .rl_reset or .rl_act is its own call site; the second one of a
    plan failed with a TypeError (each site had its own record of the calling intention,
    and the agent's traced cell read the first site's)."""
    from bdi_rl.bdi.mind import describe_waits

    mind, shared, _, _ = _seated_mind(
        tmp_path, "!go.\n@go +!go <- .rl_reset; .rl_act(0); .rl_reset; .rl_act(1); +played_twice.\n"
    )
    for action in (2, 1):
        shared.ask_reset("player_1")
        mind.run(sleep=False)
        assert describe_waits(mind) == ["waits for the world's .rl_act"]
        shared.choose("player_1", action)
        mind.run(sleep=False)
    assert mind.believes("played_twice") and shared.steps == 2 and not mind.held


def test_in_one_process_too_a_choice_that_ends_the_episode_carries_the_next_reset(tmp_path) -> None:
    """An in-process agent's .rl_act says its next call is .rl_reset: once the step ends the
    episode, its .rl_reset is answered at once (no barrier, its intention not held again)."""
    from bdi_rl.bdi.mind import describe_waits

    mind, shared, other, timers = _seated_mind(
        tmp_path, "!go.\n@go +!go <- .rl_reset; .rl_act(0); .rl_reset; +second_episode.\n"
    )
    shared.ask_reset("player_1")
    mind.run(sleep=False)
    assert describe_waits(mind) == ["waits for the world's .rl_act"]
    shared.choose("player_1", 0, then_reset=True)  # (0, 0) pays 11: the one-step episode ends
    mind.run(sleep=False)
    assert mind.believes("second_episode") and not mind.held
    assert shared.episodes == 2 and other.heard[-1] == ("begun", 0)
    assert not [entry for entry in timers.pending if entry[2]]  # no reset deadline was armed
