"""Strangers cannot steer learning (issue 14).

Anyone may tell an agent a belief: it becomes a belief with its teller as source, and that
is all. Percepts cannot be told at all; the shipped plans act only on tells from
``trusted(J)`` agents (the experiment's own, and the spec's ``[xmpp] trust``) and read their
own notes as ``[source(self)]``. Proved over a real ejabberd, each bdi-rl role in its own
process, by an outside client that is plain slixmpp (not bdi-rl's code) registering its own
account: the stranger's tells start no plan and change no Q-value (the learner's table equals
that of the same seed run without the stranger); a JID the spec trusts is acted on.
"""

from __future__ import annotations

import asyncio
import os
import re
import ssl
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import slixmpp
from slixmpp.exceptions import IqError, IqTimeout

from bdi_rl.spec import load_spec
from bdi_rl.trace.steps import expanded
from bdi_rl.xmpp.inbox import PERCEIVED
from bdi_rl.xmpp.wiring import team_percepts, trusted_jids
from tests.conftest import ROOT, run_cli
from tests.test_agent import _run
from tests.test_processes import _kill_running, _start

#: A second learner of the team that plays the protocol without learning: it is started
#: last, so the coordinator waits for it while the stranger talks, and it tells its teammate
#: nothing, so the real learner's Q-table depends on its seed alone.
STANDIN_ASL = """
!join.
@join +!join : coordinator(C) <- while (not started[source(self)]) { .send(C, tell, ready); .wait(300) }.
@alone +!join <- .rl_finish.
@train +!train[source(C)] : coordinator(C) <- +started[source(self)]; .send(C, tell, evaluated(-1, 0)).
@adopt +!adopt_policy_of(B)[source(C)] : coordinator(C) <- .send(C, tell, adopted(-1, 0, 0)); .rl_finish.
@finish +!finish[source(C)] : coordinator(C) <- .rl_finish.
"""

SPEC = """
name = "{p}trust"
seed = 7
episodes = 80
eval_episodes = 20
trace = "step"

[env]
id = "FrozenLake-v1"
kwargs = {{ map_name = "4x4", is_slippery = true }}

[[agents]]
name = "{p}coord"
role = "coordinator"
asl = "coordinator.asl"

[[agents]]
name = "{p}learner"
asl = "team-learner.asl"
mode = "episode"

[[agents]]
name = "{p}standin"
asl = "standin.asl"
mode = "episode"

[telemetry]
name = "{p}telemetry"
{extra}
"""

#: What a stranger tells the learner. Beliefs it keeps (with the stranger as source) but acts
#: on in no plan: priors, experience and a policy that would change its Q-values; its own
#: notes, which would stop it joining (training), sharing (share_every) or make it give up
#: at once on a teammate's policy (policy_timeout(0)).
TOLD_LEARNER = [
    *(f"hazard({x}, {y})" for x in range(4) for y in range(4)),
    "goal_at(0, 0, 1.0)",
    'experience("14,2,1.0,15,1;13,2,1.0,14,0")',
    'policy("0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0")',
    "policy_timeout(0)",
    "training",
    "share_every(0)",
    "successes(99)",
    'has_policy(3, 3, "1,1,2", 1.0)',
]
#: ... and percepts, which the learner refuses from anyone.
FORGED_LEARNER = [
    "training_done",
    "outcome(goal)",
    "state(3)",
    "pos(3, 3)",
    "episodes_done(80)",
    "eval(1.0, 1.0)",
    'coordinator("stranger@localhost")',
    'teammates(["stranger@localhost"])',
    'trusted("stranger@localhost")',
    "goal(0, 0)",
]
#: To the coordinator: a report of its own that would start the team early or win it, and the
#: coordinator's own notes; then the untell of a told adopting(...), whose removal must not
#: run the coordinator's -adopting plans (they would end the team).
TOLD_COORDINATOR = [
    "ready",
    "evaluated(1.0, 1.0)",
    "adopted(1.0, 1.0, 16)",
    "started",
    "concluded",
    'ready_learner("stranger@localhost")',
    'result("stranger@localhost", 1.0, 1.0)',
    'best("stranger@localhost", 1.0, 1.0)',
    "adopt_margin(100)",
    'adopting("zstandin@localhost")',
]
FORGED_COORDINATOR = ["team_size(1)", 'learners(["stranger@localhost"])', 'trusted("stranger@localhost")']

_METADATA = (
    '<x xmlns="jabber:x:data" type="form"><title>spade:x:metadata</title>'
    '<field var="performative" type="text-single"><value>BDI</value></field>'
    '<field var="ilf_type" type="text-single"><value>{ilf}</value></field></x>'
)


class Outsider(slixmpp.ClientXMPP):
    """A plain XMPP client, not bdi-rl's code: registers its own account in-band (XEP-0077)
    and speaks spade_bdi's wire format by hand (a ``jabber:x:data`` form titled
    ``spade:x:metadata`` with performative=BDI and ilf_type, the body a literal)."""

    def __init__(self, jid: str, password: str) -> None:
        super().__init__(jid, password)
        self.enable_direct_tls = False
        self.ssl_context.check_hostname = False  # the test server's certificate is self-signed
        self.ssl_context.verify_mode = ssl.CERT_NONE
        self.register_plugin("xep_0077")
        self.add_event_handler("register", self._register)
        self.add_event_handler("session_start", self._session_start)
        self.add_event_handler("message", self._message)
        self.online = asyncio.Event()
        self.received: list[tuple[str, str]] = []  # (bare sender, body)

    async def _register(self, _: Any) -> None:
        iq = self.Iq()
        iq["type"] = "set"
        iq["register"]["username"] = self.boundjid.user
        iq["register"]["password"] = self.password
        try:
            await iq.send()
        except (IqError, IqTimeout):
            pass  # already registered (or the login below fails and says so)

    def _session_start(self, _: Any) -> None:
        self.send_presence()
        self.online.set()

    def _message(self, msg: Any) -> None:
        self.received.append((msg["from"].bare, msg["body"]))

    def bdi(self, to: str, body: str, ilf: str = "tell", reply_with: str | None = None) -> None:
        msg = self.make_message(mto=to, mbody=body, mtype="chat")
        metadata = _METADATA.format(ilf=ilf)
        if reply_with is not None:
            field = f'<field var="reply_with" type="text-single"><value>{reply_with}</value></field></x>'
            metadata = metadata.replace("</x>", field)
        msg.append(ET.fromstring(metadata))
        msg.send()

    async def join(self, port: int) -> None:
        self.connect(host="127.0.0.1", port=port)
        await asyncio.wait_for(self.online.wait(), 20)

    async def leave(self) -> None:
        self.disconnect()
        await asyncio.sleep(0.1)


def _events(runs: Path) -> list[dict]:
    """The trace written so far (telemetry appends while we read: complete lines only)."""
    events = []
    for path in runs.glob("*/trace.jsonl"):  # step records expanded into their events
        events += expanded(orjson.loads(line) for line in path.read_bytes().split(b"\n")[:-1])
    return events


async def _until(runs: Path, test, what: str, timeout: float = 60) -> list[dict]:
    """Poll the trace until ``test(events)``; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        events = _events(runs)
        if test(events):
            return events
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _received(events: list[dict], agent: str, sender: str) -> list[dict]:
    return [e for e in events if e["kind"] == "msg.recv" and e["agent"] == agent and e["data"]["from"] == sender]


def _write_spec(tmp_path: Path, prefix: str, extra: str = "") -> Path:
    (tmp_path / "standin.asl").write_text(STANDIN_ASL)
    spec = tmp_path / f"{prefix}trust.toml"
    spec.write_text(SPEC.format(p=prefix, extra=extra))
    return spec


def test_a_strangers_tells_start_no_plan_and_change_no_q_value(ejabberd, tmp_path):
    prefix = "z"
    coord, learner, standin = (f"{prefix}{n}@localhost" for n in ("coord", "learner", "standin"))
    stranger = "stranger@localhost"
    spec = _write_spec(tmp_path, prefix)
    runs = tmp_path / "runs"
    env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "pw"}
    xmpp = ["--xmpp", f"localhost:{ejabberd.port}", "--runs", str(runs)]

    def role(name: str) -> subprocess.Popen:
        return _start("agent", str(spec), "--name", name, *xmpp, env=env)

    procs: list[subprocess.Popen] = [_start("telemetry", str(spec), *xmpp, env=env), role(f"{prefix}learner")]

    async def scenario() -> Outsider:
        outsider = Outsider(stranger, "stranger-pw")
        await outsider.join(ejabberd.port)
        try:
            # The learner's mind runs (it asks the absent coordinator to start it): tell it.
            await _until(
                runs,
                lambda ev: any(e["agent"] == learner and e["kind"] == "msg.send" for e in ev),
                "the learner to start",
            )
            told = [("tell", b) for b in TOLD_LEARNER + FORGED_LEARNER] + [("untell", "outcome(goal)")]
            for ilf, body in told:
                outsider.bdi(learner, body, ilf)
            await _until(
                runs,
                lambda ev: len(_received(ev, learner, stranger)) == len(told),
                "the learner to receive the stranger's messages",
            )
            # The coordinator, once its mind runs: the learner's ready has reached it.
            procs.append(role(f"{prefix}coord"))
            await _until(runs, lambda ev: _received(ev, coord, learner), "the coordinator to hear the learner")
            told = [("tell", b) for b in TOLD_COORDINATOR + FORGED_COORDINATOR] + [
                ("untell", 'adopting("zstandin@localhost")'),
                ("achieve", "finish_team"),
            ]
            for ilf, body in told:
                outsider.bdi(coord, body, ilf)
            await _until(
                runs,
                lambda ev: len(_received(ev, coord, stranger)) == len(told),
                "the coordinator to receive the stranger's messages",
            )
            # Only now the team is complete: it runs, with all that in its members' minds.
            procs.append(role(f"{prefix}standin"))
            while any(proc.poll() is None for proc in procs):
                await asyncio.sleep(0.2)
        finally:
            await outsider.leave()
        return outsider

    try:
        outsider = _run(asyncio.wait_for(scenario(), 240))
        outputs = [proc.communicate() for proc in procs]
    finally:
        _kill_running(*procs)
    for proc, (_, err) in zip(procs, outputs, strict=False):
        assert proc.returncode == 0, err
    run_dir = Path(outputs[0][0].strip().splitlines()[-1])
    events = _events(runs)
    learner_err = outputs[1][1]

    # Nothing the stranger told started a plan, in any agent.
    starts = [e for e in events if e["kind"] == "intention.start"]
    assert starts and not [e for e in starts if e["data"]["source"] == stranger]
    # The learner kept what it was told as beliefs of the stranger's, refused the percepts
    # (counted, traced, logged once), and its plans went their own way: no prior, no replay,
    # no adopted policy (its only teammate, the stand-in, tells it nothing).
    to_learner = _received(events, learner, stranger)
    refused = {e["data"]["content"] for e in to_learner if "rejected" in e["data"]}
    assert refused == set(FORGED_LEARNER)
    kept = {
        e["data"]["belief"]
        for e in events
        if e["agent"] == learner and e["kind"] == "belief.add" and e["data"]["source"] == stranger
    }
    assert len(kept) == len(TOLD_LEARNER)
    actions = {e["data"]["name"] for e in events if e["agent"] == learner and e["kind"] == "action"}
    assert {".rl_run_episode", ".rl_evaluate", ".rl_experience"} <= actions  # it trained, and shared
    assert not actions & {".rl_hazard", ".rl_goal", ".rl_replay", ".rl_adopt_policy"}
    assert learner_err.count(f"refused percepts from {stranger}") == 1  # logged once
    # Nobody told the stranger anything: it was neither a teammate nor a coordinator.
    assert not [e for e in events if e["kind"] == "msg.send" and e["data"]["to"] == stranger]
    assert not outsider.received
    # The coordinator counted its learners only: the team started when the stand-in came, the
    # best is the learner, the stranger's report and notes made no verdict.
    to_coord = _received(events, coord, stranger)
    assert {e["data"]["content"] for e in to_coord if "rejected" in e["data"]} == {*FORGED_COORDINATOR, "finish_team"}
    asked = [
        (e["data"]["to"], e["data"]["content"])
        for e in events
        if e["agent"] == coord and e["kind"] == "msg.send" and e["data"]["performative"] == "achieve"
    ]
    assert asked[:2] in ([(learner, "train"), (standin, "train")], [(standin, "train"), (learner, "train")])
    assert sorted(asked[2:]) == sorted([(standin, f'adopt_policy_of("{learner}")'), (learner, "finish")])
    best = [
        e["data"]["belief"]
        for e in events
        if e["agent"] == coord
        and e["kind"] == "belief.add"
        and e["data"]["belief"].startswith("best(")
        and e["data"]["source"] == "self"
    ]
    assert len(best) == 1 and best[0].startswith(f'best("{learner}"')

    # The learner's Q-table is the one the same seed learns without any stranger.
    reference = run_cli("run", str(spec), "--runs", str(tmp_path / "reference"), "--no-progress", timeout=120)
    assert reference.returncode == 0, reference.stderr
    alone = Path(reference.stdout.strip().splitlines()[-1])
    with (
        np.load(run_dir / "qtables" / f"{prefix}learner.npz") as told_q,
        np.load(alone / "qtables" / f"{prefix}learner.npz") as alone_q,
    ):
        assert np.array_equal(told_q["q"], alone_q["q"])
    _assert_percepts_known(events)


def test_a_jid_the_spec_trusts_is_acted_on(ejabberd, tmp_path):
    """``[xmpp] trust`` lets an outside client in on purpose: the learner acts on its hazard
    and answers its askOne for the learner's policy (its +?policy plan). It still cannot tell
    a percept."""
    prefix = "y"
    learner, friend = f"{prefix}learner@localhost", "friend@localhost"
    spec = _write_spec(tmp_path, prefix, extra=f'\n[xmpp]\ntrust = ["{friend}"]\n')
    runs = tmp_path / "runs"
    env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "pw"}
    xmpp = ["--xmpp", f"localhost:{ejabberd.port}", "--runs", str(runs)]
    # No coordinator: the learner waits for it, and meanwhile hears the friend.
    procs = [
        _start("telemetry", str(spec), *xmpp, env=env),
        _start("agent", str(spec), "--name", f"{prefix}learner", *xmpp, env=env),
    ]

    async def scenario() -> tuple[list[dict], Outsider]:
        outsider = Outsider(friend, "friend-pw")
        await outsider.join(ejabberd.port)
        try:
            await _until(
                runs,
                lambda ev: any(e["agent"] == learner and e["kind"] == "msg.send" for e in ev),
                "the learner to start",
            )
            outsider.bdi(learner, "hazard(1, 1)")
            outsider.bdi(learner, "training_done")
            outsider.bdi(learner, "policy(P)[source(self)]", "askOne", reply_with="q1")
            events = await _until(
                runs,
                lambda ev: any(
                    e["agent"] == learner and e["kind"] == "action" and e["data"]["name"] == ".rl_hazard" for e in ev
                ),
                "the learner to act on the trusted hazard",
            )
            deadline = time.monotonic() + 20
            while not outsider.received and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            return events, outsider
        finally:
            await outsider.leave()

    try:
        events, outsider = _run(asyncio.wait_for(scenario(), 120))
    finally:
        _kill_running(*procs)
        for proc in procs:
            proc.communicate()
    hazard = [
        e for e in events if e["agent"] == learner and e["kind"] == "action" and e["data"]["name"] == ".rl_hazard"
    ]
    assert [h["data"]["args"] for h in hazard] == [[1, 1]]
    starts = {
        e["data"]["plan"]
        for e in events
        if e["agent"] == learner and e["kind"] == "intention.start" and e["data"]["source"] == friend
    }
    assert starts == {"told_hazard", "offer_policy"}
    [(sender, body)] = outsider.received
    assert sender == learner and re.fullmatch(r'policy\("[0-3](,[0-3]){15}"\)', body)
    refused = [e["data"]["content"] for e in _received(events, learner, friend) if "rejected" in e["data"]]
    assert refused == ["training_done"]


def test_every_agent_trusts_the_experiments_other_agents_and_the_specs_trust_list(tmp_path):
    spec_path = tmp_path / "spec.toml"
    spec_path.write_text(SPEC.format(p="x", extra='\n[xmpp]\ntrust = ["ops@example.org"]\n'))
    (tmp_path / "standin.asl").write_text(STANDIN_ASL)
    spec = load_spec(spec_path)
    everyone = ("xcoord@localhost", "xlearner@localhost", "xstandin@localhost", "ops@example.org")
    assert trusted_jids(spec, "localhost") == everyone
    for name in ("xcoord", "xlearner", "xstandin"):
        trusted = [p.args[0] for p in team_percepts(spec, name, "localhost") if p.functor == "trusted"]
        assert trusted == [j for j in everyone if j != f"{name}@localhost"]  # not itself: that is source(self)


def _assert_percepts_known(events: list[dict]) -> None:
    """Every belief the run perceived is one the agents refuse to be told."""
    perceived = {
        _functor_arity(e["data"]["belief"])
        for e in events
        if e["kind"] == "belief.add" and e["data"]["source"] == "percept"
    }
    assert perceived and perceived <= PERCEIVED, perceived - PERCEIVED


def _functor_arity(text: str) -> tuple[str, int]:
    from bdi_rl.bdi.wire import parse_literal

    return parse_literal(text).key


def test_every_percept_the_code_emits_is_refused_when_told():
    """The percepts named where the code emits them (``perceive("name", ...)`` and structs
    built with the PERCEPT annotations) are all in PERCEIVED; the run above checks arities."""
    names = set()
    for path in (ROOT / "bdi_rl").rglob("*.py"):
        text = path.read_text()
        names |= set(re.findall(r'perceive\(\s*"(\w+)"', text))
        names |= set(re.findall(r'Struct\(\s*"(\w+)",[^\n]*PERCEPT\)', text))
    assert {"state", "outcome", "training_done", "teammates", "trusted"} <= names
    assert names <= {functor for functor, _ in PERCEIVED}, names - {f for f, _ in PERCEIVED}
