"""Tracing compiled in (issue 33) writes the trace the wrappers wrote.

A listener given when an agent is made is compiled into its plans (``bdi.runtime.traced``,
``tracing.compile_listener``); one set later is wrapped around the agent's paths
(``tracing.set_listener``, the way every traced agent ran before). The same programs, traced
both ways at step level, must print the same lines and write the same events, in the same
order, with the same data: every program of the Jason differential corpus on both reasoning
cycles, and asl/learner.asl learning FrozenLake with the real ``.rl_*`` actions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bdi_rl.bdi import mind as mind_module
from bdi_rl.bdi.actions import RlBridge
from bdi_rl.bdi.checkpointing import CheckpointSchedule
from bdi_rl.bdi.episode import EpisodeSession, Percepts
from bdi_rl.bdi.mind import load_mind
from bdi_rl.bdi.mindtrace import TraceListener
from bdi_rl.bdi.policycache import PolicyCache
from bdi_rl.bdi.runtime import Actions, Agent
from bdi_rl.bdi.runtime.agent import AGENT_CLASSES
from bdi_rl.bdi.runtime.parser import parse_file, parse_text
from bdi_rl.bdi.runtime.syntax import Program
from bdi_rl.rl.envs import make_env
from bdi_rl.rl.qlearning import LearningConfig, QLearner
from bdi_rl.trace.kinds import TraceLevel
from bdi_rl.trace.steps import expanded
from bdi_rl.trace.tracer import Tracer
from tests import jason_corpus

LEARNER = Path(__file__).parent.parent / "asl" / "learner.asl"


def _events(tracer: Tracer) -> list[tuple[Any, ...]]:
    """The tracer's events as a reader sees them (records expanded), without their clocks
    (an evaluation's ``seconds`` too)."""
    tracer.flush_record()
    return [
        (e["kind"], {k: v for k, v in e["data"].items() if k != "seconds"}, e.get("episode"), e.get("step"))
        for e in expanded(tracer.pending)
    ]


def _traced_loader(compiled: bool, level: TraceLevel, tracers: dict[str, Tracer]) -> Any:
    """``load_agent`` for the corpus, the agent traced at ``level``, its listener compiled
    in or wrapped; its initial beliefs added once the listener is there (as bdi.mind does)."""

    def load(path: Path, name: str, actions: Actions, host: Any, *, start: bool, cycle: str) -> Agent:
        program = parse_file(path)
        beliefs, program.beliefs = program.beliefs, []
        tracer = tracers[name] = Tracer("run", f"{name}@localhost", level)
        if compiled:
            listener = TraceListener(tracer)
            agent = AGENT_CLASSES[cycle](name, program, actions, host, start=False, listener=listener)
            listener.mind = agent
        else:
            agent = AGENT_CLASSES[cycle](name, program, actions, host, start=False)
            agent.set_listener(TraceListener(tracer, agent))
        agent.add_program(Program(beliefs=beliefs), goals=False)
        if start:
            agent.start()
        return agent

    return load


def _corpus_run(
    monkeypatch: pytest.MonkeyPatch, program: jason_corpus.Program, cycle: str, level: TraceLevel, compiled: bool
) -> tuple[str, list[str], dict[str, list[tuple[Any, ...]]]]:
    tracers: dict[str, Tracer] = {}
    monkeypatch.setattr(jason_corpus, "load_agent", _traced_loader(compiled, level, tracers))
    outcome = jason_corpus.run_program(program, cycle=cycle)
    return outcome.status, outcome.printed, {name: _events(tracer) for name, tracer in tracers.items()}


@pytest.mark.parametrize(
    "cycle, level", [("jason", TraceLevel.STEP), ("fast", TraceLevel.STEP), ("fast", TraceLevel.CYCLE)]
)
def test_every_corpus_program_writes_the_same_trace_compiled_in_as_wrapped(monkeypatch, cycle, level):
    """At ``cycle`` level too: the listener then sees every push and pop (it snapshots the
    stacks) and every plan selection (the options)."""
    programs = jason_corpus.discover()
    assert len(programs) > 400
    traced_events = 0
    for program in programs:
        wrapped = _corpus_run(monkeypatch, program, cycle, level, compiled=False)
        compiled = _corpus_run(monkeypatch, program, cycle, level, compiled=True)
        assert compiled[:2] == wrapped[:2], program.name  # the same outcome and printed lines
        assert compiled[2] == wrapped[2], program.name  # the same events, agent by agent
        traced_events += sum(map(len, compiled[2].values()))
    assert traced_events > 10_000  # (the programs did run traced)


def _wrapping(cls: type[Agent]) -> Any:
    """``cls`` as bdi.mind made a traced agent before tracing was compiled in: untraced,
    then the listener set (wrapped) before its beliefs are added."""

    def make(name: str, program: Program, actions: Actions, host: Any, *, start: bool, listener: Any) -> Agent:
        agent = cls(name, program, actions, host, start=start)
        agent.set_listener(listener)
        return agent

    return make


def _learner_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: str, compiled: bool
) -> tuple[list[tuple[Any, ...]], np.ndarray]:
    """asl/learner.asl for 40 FrozenLake episodes and 5 greedy ones, traced at step level."""
    env = make_env("FrozenLake-v1", {"map_name": "4x4", "is_slippery": True})
    learner = QLearner(env.n_states, env.n_actions, LearningConfig(), seed=3)
    tracer = Tracer("run", "learner@localhost", TraceLevel.STEP)
    session = EpisodeSession(env, learner, tracer, Percepts(), episodes=40, eval_episodes=5, seed=3)
    name = "compiled" if compiled else "wrapped"
    bridge = RlBridge(
        session,
        CheckpointSchedule(session, tmp_path / "learner.npz", {}),  # (both runs: the trace names it)
        PolicyCache(session, None, None, name),
        lambda: None,
    )
    actions = Actions()
    bridge.register(actions)
    with monkeypatch.context() as patch:
        if not compiled:
            patch.setattr(mind_module, "AGENT_CLASSES", {k: _wrapping(cls) for k, cls in AGENT_CLASSES.items()})
        mind = load_mind(LEARNER, actions, "learner", tracer, prepare=lambda m: bridge.start(m, mode), cycle="fast")
    assert (mind._compiler.recording is not None) == compiled and ("achieve" in mind.__dict__) != compiled
    mind.run()
    assert not mind.host.failures  # type: ignore[attr-defined]
    return _events(tracer), learner.q


@pytest.mark.parametrize("mode", ["step", "episode"])
def test_the_learner_writes_the_same_trace_compiled_in_as_wrapped(monkeypatch, tmp_path, mode):
    wrapped, wrapped_q = _learner_run(monkeypatch, tmp_path, mode, compiled=False)
    compiled, compiled_q = _learner_run(monkeypatch, tmp_path, mode, compiled=True)
    assert np.array_equal(compiled_q, wrapped_q)
    kinds = {event[0] for event in compiled}
    assert {"belief.add", "belief.del", "goal.add", "intention.start", "intention.end", "action"} <= kinds
    assert len(compiled) > 1000 if mode == "step" else len(compiled) > 100
    assert compiled == wrapped


def test_an_untraced_agent_runs_the_plain_code_and_a_compiled_listener_stays():
    """Below step level nothing is compiled in or wrapped; a compiled-in listener is the
    agent's for its life (set_listener refuses to wrap another around it)."""
    program = "!g.\n+!g <- +b(1); !h.\n+!h <- .print(x)."
    plain = Agent("a", parse_text(program))
    assert plain._compiler.recording is None and not {"_push", "_bb_add", "cycle"} & set(plain.__dict__)
    tracer = Tracer("run", "a@localhost", TraceLevel.STEP)
    listener = TraceListener(tracer)
    traced = Agent("a", parse_text(program), listener=listener)
    listener.mind = traced
    assert traced.listener is listener and {"_push", "_frame_done", "_bb_add", "replace_percept"} <= set(
        traced.__dict__
    )
    with pytest.raises(RuntimeError, match="compiled into its plans"):
        traced.set_listener(None)
    traced.run()
    assert [e[0] for e in _events(tracer)] == [
        "goal.add",
        "intention.start",
        "belief.add",
        "goal.add",
        "intention.start",
        "intention.end",
        "intention.end",
    ]
