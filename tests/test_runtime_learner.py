"""asl/learner.asl on bdi_rl.bdi.runtime with the real .rl_* actions (issue 16).

The same plans, seed and env on python-agentspeak (the interpreter in use today) and on
the new runtime must learn the same Q-table, bit for bit: the runtime changes how plans
run, not what they do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import agentspeak as asp
import agentspeak.stdlib as asp_stdlib
import numpy as np
import pytest

from bdi_rl.bdi.actions import RlBridge
from bdi_rl.bdi.checkpointing import CheckpointSchedule
from bdi_rl.bdi.episode import EpisodeSession, Percepts
from bdi_rl.bdi.mind import load_mind
from bdi_rl.bdi.policycache import PolicyCache
from bdi_rl.bdi.runtime import Actions, Host, load_agent
from bdi_rl.bdi.runtime.terms import Struct, atom
from bdi_rl.rl.envs import make_env
from bdi_rl.rl.qlearning import LearningConfig, QLearner
from bdi_rl.trace.events import TraceLevel
from bdi_rl.trace.tracer import Tracer

LEARNER = Path(__file__).parent.parent / "asl" / "learner.asl"


def from_asp(value: Any) -> Any:
    """A python-agentspeak term (the bridge builds its percepts as those) as a runtime term."""
    if isinstance(value, asp.Literal):
        args = tuple(from_asp(a) for a in value.args)
        return Struct(value.functor, args) if args else atom(value.functor)
    if isinstance(value, tuple):
        return tuple(from_asp(v) for v in value)
    return value


class PerceptSink:
    """What the bridge needs of a mind (replace_percept, drop_percepts), onto a runtime agent.

    The bridge's percepts are cached literals (``bdi.episode.percept``): each is converted
    once, keyed by identity (the entry keeps the literal alive, so its id is not reused)."""

    def __init__(self) -> None:
        self.agent: Any = None
        self._converted: dict[int, tuple[Any, str, tuple]] = {}

    def replace_percept(self, term: Any) -> None:
        entry = self._converted.get(id(term))
        if entry is None or entry[0] is not term:
            entry = self._converted[id(term)] = (term, term.functor, tuple(from_asp(a) for a in term.args))
        self.agent.replace_percept(entry[1], entry[2])

    def drop_percepts(self, functor: str, arity: int) -> None:
        self.agent.drop_percepts(functor, arity)


def _bridge(tmp_path: Path, name: str, episodes: int, finished: list) -> tuple[RlBridge, QLearner]:
    env = make_env("FrozenLake-v1", {"map_name": "4x4", "is_slippery": True})
    learner = QLearner(env.n_states, env.n_actions, LearningConfig(), seed=3)
    tracer = Tracer("run", f"{name}@localhost", TraceLevel.EPISODE)
    session = EpisodeSession(env, learner, tracer, Percepts(), episodes=episodes, eval_episodes=5, seed=3)
    bridge = RlBridge(session, CheckpointSchedule(session, tmp_path / f"{name}.npz", {}),
                      PolicyCache(session, None, None, name), lambda: finished.append(name))
    return bridge, learner


@pytest.mark.parametrize("mode", ["step", "episode"])
def test_learner_asl_learns_the_same_table_as_python_agentspeak(tmp_path: Path, mode: str) -> None:
    episodes = 60
    finished: list[str] = []

    old_bridge, old_learner = _bridge(tmp_path, "old", episodes, finished)
    old_actions = asp.Actions(asp_stdlib.actions)
    old_bridge.register(old_actions)
    mind = load_mind(LEARNER, old_actions, "old", prepare=lambda m: old_bridge.start(m, mode))
    for _ in range(10_000_000):
        if not mind.step():
            break

    new_bridge, new_learner = _bridge(tmp_path, "new", episodes, finished)
    actions = Actions()
    new_bridge.register(actions)
    sink = PerceptSink()
    agent = load_agent(LEARNER, "new", actions, Host(), start=False)
    sink.agent = agent
    new_bridge.start(sink, mode)
    agent.start()
    agent.run()

    assert finished == ["old", "new"]
    assert not agent.failures
    assert new_learner.episodes == old_learner.episodes == episodes
    assert np.array_equal(new_learner.q, old_learner.q)
    beliefs = agent.belief_texts()
    assert "training_done[source(percept)]" in beliefs
    assert any(b.startswith("eval(") for b in beliefs)
    # the outcome plans counted every episode: successes + failures == episodes
    counts = {b.split("(")[0]: int(b.split("(")[1].split(")")[0]) for b in beliefs
              if b.startswith(("successes(", "failures("))}
    assert counts["successes"] + counts["failures"] == episodes
