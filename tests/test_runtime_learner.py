"""asl/learner.asl on bdi-rl's mind (bdi.runtime) with the real .rl_* actions (issue 16).

The same plans, seed and env on python-agentspeak (the interpreter bdi-rl used before,
tests/asp_reference.py) and on the runtime must learn the same Q-table, bit for bit: the
runtime changes how plans run, not what they do.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bdi_rl.bdi.actions import RlBridge
from bdi_rl.bdi.checkpointing import CheckpointSchedule
from bdi_rl.bdi.episode import EpisodeSession, Percepts
from bdi_rl.bdi.mind import load_mind
from bdi_rl.bdi.policycache import PolicyCache
from bdi_rl.bdi.runtime import Actions
from bdi_rl.rl.envs import make_env
from bdi_rl.rl.qlearning import LearningConfig, QLearner
from bdi_rl.trace.kinds import TraceLevel
from bdi_rl.trace.tracer import Tracer
from tests import asp_reference

LEARNER = Path(__file__).parent.parent / "asl" / "learner.asl"


def _bridge(tmp_path: Path, name: str, episodes: int, finished: list) -> tuple[RlBridge, QLearner]:
    env = make_env("FrozenLake-v1", {"map_name": "4x4", "is_slippery": True})
    learner = QLearner(env.n_states, env.n_actions, LearningConfig(), seed=3)
    tracer = Tracer("run", f"{name}@localhost", TraceLevel.EPISODE)
    session = EpisodeSession(env, learner, tracer, Percepts(), episodes=episodes, eval_episodes=5, seed=3)
    bridge = RlBridge(
        session,
        CheckpointSchedule(session, tmp_path / f"{name}.npz", {}),
        PolicyCache(session, None, None, name),
        lambda: finished.append(name),
    )
    return bridge, learner


def run_runtime(bridge: RlBridge, mode: str) -> object:
    """learner.asl on bdi.mind, as an agent runs it (untraced)."""
    actions = Actions()
    bridge.register(actions)
    mind = load_mind(LEARNER, actions, "new", prepare=lambda m: bridge.start(m, mode))
    mind.run()
    return mind


def run_reference(bridge: RlBridge, mode: str) -> asp_reference.Mind:
    """learner.asl on python-agentspeak."""
    actions = asp_reference.actions()
    bridge.register(actions)  # the same table API: add_procedure / add_function
    mind = asp_reference.load(LEARNER, actions, "old", prepare=lambda m: bridge.start(m, mode))
    mind.run()
    return mind


@pytest.mark.parametrize("mode", ["step", "episode"])
def test_learner_asl_learns_the_same_table_as_python_agentspeak(tmp_path: Path, mode: str) -> None:
    episodes = 60
    finished: list[str] = []
    old_bridge, old_learner = _bridge(tmp_path, "old", episodes, finished)
    run_reference(old_bridge, mode)
    new_bridge, new_learner = _bridge(tmp_path, "new", episodes, finished)
    mind = run_runtime(new_bridge, mode)

    assert finished == ["old", "new"]
    assert not mind.host.failures  # type: ignore[attr-defined]
    assert new_learner.episodes == old_learner.episodes == episodes
    assert np.array_equal(new_learner.q, old_learner.q)
    beliefs = mind.belief_texts()  # type: ignore[attr-defined]
    assert "training_done[source(percept)]" in beliefs
    assert any(b.startswith("eval(") for b in beliefs)
    # the outcome plans counted every episode: successes + failures == episodes
    counts = {
        b.split("(")[0]: int(b.split("(")[1].split(")")[0])
        for b in beliefs
        if b.startswith(("successes(", "failures("))
    }
    assert counts["successes"] + counts["failures"] == episodes
