"""A team (coordinator + learners, asl/team-learner.asl) over XMPP: who told whom what, and why.

Once in one process on the embedded server, once as separate OS processes against ejabberd,
exactly as the compose services run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bdi_rl.trace.reading import read_trace
from tests.conftest import run_cli
from tests.test_processes import _assert_every_event_once, _start

TEAM_SPEC = """
name = "team"
seed = 5
episodes = 150
eval_episodes = 100
trace = "step"

[env]
id = "FrozenLake-v1"
kwargs = { map_name = "4x4", is_slippery = true }

[learning]
epsilon_decay_episodes = 100

[[agents]]
name = "{coordinator}"
role = "coordinator"
asl = "coordinator.asl"

[[agents]]
name = "{learner}"
count = 3
asl = "team-learner.asl"
mode = "episode"
beliefs = ["share_every(5)"]

[telemetry]
name = "{telemetry}"
"""


def _team_spec(prefix: str) -> str:
    return (
        TEAM_SPEC.replace("{coordinator}", f"{prefix}coord")
        .replace("{learner}", f"{prefix}learner")
        .replace("{telemetry}", f"{prefix}telemetry")
    )


def _assert_team_trace(run_dir: Path, prefix: str, episodes: int = 150) -> None:
    coordinator = f"{prefix}coord@localhost"
    learners = [f"{prefix}learner-{i}@localhost" for i in (1, 2, 3)]
    events = read_trace(run_dir / "trace.jsonl")
    _assert_every_event_once(events, [j.split("@")[0] for j in [coordinator, *learners]])

    def of(agent: str, kind: str) -> list[dict]:
        return [e for e in events if e["agent"] == agent and e["kind"] == kind]

    # The coordinator heard every learner say it is ready, then asked each to train.
    ready_from = {e["data"]["from"] for e in of(coordinator, "msg.recv") if e["data"]["content"] == "ready"}
    assert ready_from == set(learners)
    asked = {e["data"]["to"] for e in of(coordinator, "msg.send") if e["data"]["performative"] == "achieve"}
    assert asked == set(learners)
    for learner in learners:
        # ... and each learner took up that goal because the coordinator asked.
        goals = [e for e in of(learner, "goal.add") if e["data"]["goal"] == "train"]
        assert [g["data"]["source"] for g in goals] == [coordinator]
        starts = [e for e in of(learner, "intention.start") if e["data"]["plan"] == "train_on_request"]
        assert len(starts) == 1 and starts[0]["data"]["source"] == coordinator
        # Teammates told it what they learned: experience it replayed, holes it turned into priors.
        peers = set(learners) - {learner}
        told = [
            e
            for e in of(learner, "belief.add")
            if e["data"]["source"] in peers and e["data"]["belief"].startswith(("hazard(", "experience("))
        ]
        assert {e["data"]["belief"].split("(")[0] for e in told} == {"hazard", "experience"}
        replays = [e for e in of(learner, "action") if e["data"]["name"] == ".rl_replay"]
        hazards = [e for e in of(learner, "action") if e["data"]["name"] == ".rl_hazard"]
        assert replays and hazards
        sent = [e for e in of(learner, "msg.send") if e["data"]["content"].startswith("experience(")]
        assert sent and {e["data"]["to"] for e in sent} == peers
        # It reported its score, which the coordinator received.
        assert any(
            e["data"]["content"].startswith("evaluated(") and e["data"]["from"] == learner
            for e in of(coordinator, "msg.recv")
        )
    # The coordinator's verdict: the best learner keeps its policy; every other learner either
    # keeps its own (within the margin) or adopts the best one's, asked for by `achieve`.
    best_beliefs = [e for e in of(coordinator, "belief.add") if e["data"]["belief"].startswith("best(")]
    assert len(best_beliefs) == 1
    best = best_beliefs[0]["data"]["belief"].split('"')[1]
    assert best in learners

    def asked_of(learner: str) -> list[str]:
        return [
            e["data"]["content"]
            for e in of(learner, "msg.recv")
            if e["data"]["from"] == coordinator and e["data"]["performative"] == "achieve"
        ]

    assert asked_of(best) == ["train", "finish"]
    for learner in set(learners) - {best}:
        verdict = asked_of(learner)[1:]
        assert verdict in (["finish"], [f'adopt_policy_of("{best}")']), verdict
        if verdict == ["finish"]:
            continue
        # An adopter asks the best learner for its own policy (askOne), whose +?policy plan
        # answers, and reports back.
        assert any(
            e["data"] == {"to": best, "performative": "askOne", "content": "policy(P)[source(self)]"}
            for e in of(learner, "msg.send")
        )
        policies = [e for e in of(learner, "msg.recv") if e["data"]["content"].startswith("policy(")]
        assert [(p["data"]["from"], p["data"]["performative"]) for p in policies] == [(best, "tell")]
        assert any(
            e["data"]["plan"] == "offer_policy" and e["data"]["source"] == learner for e in of(best, "intention.start")
        )
        assert len(of(learner, "eval")) == 2  # once its own policy, once the adopted one
        assert any(
            e["data"]["content"].startswith("adopted(") and e["data"]["from"] == learner
            for e in of(coordinator, "msg.recv")
        )

    summary = json.loads((run_dir / "summary.json").read_text())
    entries = [summary["agents"][learner.split("@")[0]] for learner in learners]
    for entry in entries:
        assert entry["episodes"] == episodes and entry["eval"]["episodes"] == 100
        assert entry["replayed_steps"] > 0
    # Shared experience is learned from: a learner replays its teammates' transitions until
    # its own training ends (whoever finishes last hears the most). How much each hears depends
    # on how far apart the processes train: from 3x its own steps (in step) down to ~0.95x when
    # four learner processes share two loaded cores (seen on bdi.runtime, 3x faster than before).
    assert sum(e["replayed_steps"] for e in entries) > sum(e["env_steps"] for e in entries) / 2


def test_team_run_on_the_embedded_server(tmp_path, write_spec):
    spec = write_spec(_team_spec("e"))
    result = run_cli("run", str(spec), "--runs", str(tmp_path / "runs"), timeout=300)
    assert result.returncode == 0, result.stderr
    run_dir = next((tmp_path / "runs").iterdir())
    _assert_team_trace(run_dir, "e")
    assert "ecoord (coordinator)" in result.stdout


def test_a_step_mode_learner_tells_the_goal_with_the_return_of_the_episode_that_reached_it(tmp_path, write_spec):
    """In step mode the episode's return is perceived when the episode is closed: the goal is
    told then, with that return (1 on FrozenLake), not the previous episode's, and no plan
    fails for want of a return on the first goal."""
    text = (
        _team_spec("s")
        .replace('mode = "episode"', 'mode = "step"')
        .replace("is_slippery = true", "is_slippery = false")
        .replace("episodes = 150", "episodes = 80")
    )
    result = run_cli("run", str(write_spec(text)), "--runs", str(tmp_path / "runs"), "--no-progress", timeout=300)
    assert result.returncode == 0, result.stderr
    events = read_trace(next((tmp_path / "runs").iterdir()) / "trace.jsonl")
    told = [
        e["data"]["content"] for e in events if e["kind"] == "msg.send" and e["data"]["content"].startswith("goal_at(")
    ]
    assert told and all(t.startswith("goal_at(3, 3, 1") for t in told), told
    assert not [e for e in events if e["kind"] == "intention.fail"]


PROCESS_EPISODES = 400


def test_team_in_separate_processes_over_ejabberd(ejabberd, tmp_path, write_spec):
    """telemetry + coordinator + 3 learner processes (claiming their names, as scaled
    containers do): the same conversation, over a real server."""
    # Longer than in one process: three learner processes on two loaded cores train at different
    # paces, and at 150 episodes one once finished before any teammate's experience reached it.
    spec = write_spec(_team_spec("p").replace("episodes = 150", f"episodes = {PROCESS_EPISODES}"))
    runs = tmp_path / "runs"
    env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "pw"}
    xmpp = ["--xmpp", f"localhost:{ejabberd.port}", "--runs", str(runs)]
    telemetry = _start("telemetry", str(spec), *xmpp, env=env)
    others = [_start("agent", str(spec), "--claim", "plearner", *xmpp, env=env) for _ in range(3)]
    others.append(_start("agent", str(spec), "--name", "pcoord", *xmpp, env=env))
    try:
        for proc in others:
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err
        out, err = telemetry.communicate(timeout=60)
        assert telemetry.returncode == 0, err
    finally:
        for proc in [*others, telemetry]:
            if proc.poll() is None:
                proc.kill()
    run_dir = Path(out.strip().splitlines()[-1])
    _assert_team_trace(run_dir, "p", PROCESS_EPISODES)


def test_a_failed_teammate_ends_the_run_instead_of_hanging_it(tmp_path, write_spec):
    """The team waits for every learner; when one's mind fails the others are stopped after
    a grace period, and the run reports both (exit 1) with everything flushed."""
    (tmp_path / "broken.asl").write_text("!go.\n@go +!go <- .rl_act(0).\n")  # act before reset
    text = (
        _team_spec("f")
        + """
[[agents]]
name = "fbroken"
asl = "broken.asl"
"""
    )
    spec = write_spec(text)
    result = run_cli("run", str(spec), "--runs", str(tmp_path / "runs"), "--no-progress", timeout=120)
    assert result.returncode == 1, result.stderr
    assert "fbroken" in result.stderr and "Traceback" not in result.stderr
    summary = json.loads(next((tmp_path / "runs").glob("*/summary.json")).read_text())
    assert "broken.asl:2:" in summary["agents"]["fbroken"]["failure"]
    assert ".rl_act before any .rl_reset" in summary["agents"]["fbroken"]["failure"]
    for name in ("fcoord", "flearner-1", "flearner-2", "flearner-3"):
        assert summary["agents"][name]["failure"] == "stopped: fbroken failed"
    events = read_trace(next((tmp_path / "runs").glob("*/trace.jsonl")))
    _assert_every_event_once(events, ["fcoord", "flearner-1", "fbroken"])


#: A best learner that has no policy to give: it reports a perfect score (so the coordinator
#: names it Best) and then either has no plan for ?policy (the ask is answered untell at
#: once) or one that never ends (the ask times out).
SILENT_BEST_ASL = """
!join.
@join +!join : coordinator(C) <- while (not started[source(self)]) {{ .send(C, tell, ready); .wait(300) }}.
@train +!train[source(C)] : coordinator(C) <- +started[source(self)]; .send(C, tell, evaluated(1.0, 1.0)).
@finish +!finish[source(C)] : coordinator(C) <- .rl_finish.
{policy_plan}
"""


@pytest.mark.parametrize("policy_plan", ["", "@stall +?policy(_) <- .wait(60000)."], ids=["untell", "timeout"])
def test_an_adopter_whose_best_gives_no_policy_keeps_its_own(tmp_path, write_spec, policy_plan):
    """Best does not give its policy (it has none to give, or does not answer within
    policy_timeout): the adopter's ask fails, -!adopt_policy_of keeps its own policy and tells
    the coordinator kept_own(...), and the coordinator still finishes the team."""
    (tmp_path / "silent.asl").write_text(SILENT_BEST_ASL.format(policy_plan=policy_plan))
    spec = write_spec(
        TEAM_SPEC.replace("{coordinator}", "scoord")
        .replace("{telemetry}", "stelemetry")
        .replace("{learner}", "slearner")
        .replace("count = 3", "count = 1")
        .replace('beliefs = ["share_every(5)"]', 'beliefs = ["share_every(5)", "policy_timeout(500)"]')
        + '\n[[agents]]\nname = "sbest"\nasl = "silent.asl"\n'
    )
    result = run_cli("run", str(spec), "--runs", str(tmp_path / "runs"), "--no-progress", timeout=300)
    assert result.returncode == 0, result.stderr
    run_dir = next((tmp_path / "runs").iterdir())
    events = read_trace(run_dir / "trace.jsonl")
    coordinator, learner, best = "scoord@localhost", "slearner@localhost", "sbest@localhost"

    def of(agent: str, kind: str) -> list[dict]:
        return [e for e in events if e["agent"] == agent and e["kind"] == kind]

    assert {
        (e["data"]["to"], e["data"]["content"])
        for e in of(coordinator, "msg.send")
        if e["data"]["performative"] == "achieve"
    } == {(learner, "train"), (best, "train"), (learner, f'adopt_policy_of("{best}")'), (best, "finish")}
    assert [
        (e["data"]["to"], e["data"]["content"])
        for e in of(learner, "msg.send")
        if e["data"]["performative"] == "askOne"
    ] == [(best, "policy(P)[source(self)]")]
    plans = [e["data"]["plan"] for e in of(learner, "intention.start")]
    assert "adopt_on_request" in plans and "keep_own_policy" in plans
    actions = [e["data"]["name"] for e in of(learner, "action")]
    assert ".rl_adopt_policy" not in actions and actions.count(".rl_evaluate") == 1  # its own policy stands
    [kept] = [
        e["data"]["content"]
        for e in of(coordinator, "msg.recv")
        if e["data"]["from"] == learner and e["data"]["content"].startswith("kept_own(")
    ]
    summary = json.loads((run_dir / "summary.json").read_text())
    own = summary["agents"]["slearner"]["eval"]
    mean, success = (float(x) for x in kept[len("kept_own(") : -1].split(","))
    assert (mean, success) == (pytest.approx(own["mean_return"]), pytest.approx(own["success_rate"]))
    assert "learner_kept_own" in [e["data"]["plan"] for e in of(coordinator, "intention.start")]
