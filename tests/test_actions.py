"""The internal actions: the one bridge between plans and the Q-learner."""

from __future__ import annotations

import agentspeak as asp
import agentspeak.stdlib as asp_stdlib
import numpy as np
import pytest

from bdi_rl.actions import EXPERIENCE_CHARS, RlBridge
from bdi_rl.envs import make_env
from bdi_rl.mind import load_mind
from bdi_rl.qlearning import LearningConfig, QLearner
from bdi_rl.trace import TraceLevel, Tracer


def _run(mind, cycles=10_000):
    for _ in range(cycles):
        if not mind.step():
            break


def test_rl_actions_drive_a_learner_from_plans(tmp_path):
    """The internal actions bridge plans and learner: percepts, choose/act, perceive again."""
    env = make_env("FrozenLake-v1", {"map_name": "4x4", "is_slippery": False})
    learner = QLearner(env.n_states, env.n_actions, LearningConfig(), seed=0)
    tracer = Tracer("run", "a@localhost", TraceLevel.STEP)
    finished = []
    bridge = RlBridge(env, learner, tracer, episodes=1, eval_episodes=5, seed=0,
                      qtable_path=tmp_path / "q.npz", qtable_meta={}, on_finish=lambda: finished.append(1))
    actions = asp.Actions(asp_stdlib.actions)
    bridge.register(actions)
    path = tmp_path / "plans.asl"
    path.write_text("""
!go.
@go +!go <- .rl_reset; -state(_)[source(percept)]; .rl_perceive;
            ?state(S); .rl_choose(S, A); .rl_act(A); .rl_evaluate; .rl_save_qtable; .rl_finish.
""")
    bridge.mind = mind = load_mind(path, actions, "a", tracer)
    _run(mind)
    assert not mind.failures and finished == [1]
    texts = mind.belief_texts()
    assert any(t.startswith("state(") for t in texts) and any(t.startswith("pos(") for t in texts)
    assert any(t.startswith("eval(") for t in texts)
    assert (tmp_path / "q.npz").is_file() and learner.env_steps == 1
    kinds = [e["kind"] for e in tracer.pending]
    assert {"rl.step", "eval", "qtable.save", "action"} <= set(kinds)


def _bridge(tmp_path, env_kwargs=None, seed=0, config=None):
    env = make_env("FrozenLake-v1", env_kwargs or {"map_name": "4x4", "is_slippery": True})
    learner = QLearner(env.n_states, env.n_actions, config or LearningConfig(), seed=seed)
    return RlBridge(env, learner, Tracer("run", f"a{seed}@localhost", TraceLevel.EPISODE),
                    episodes=100, eval_episodes=1, seed=seed, qtable_path=tmp_path / f"{seed}.npz",
                    qtable_meta={}, on_finish=lambda: None)


class _Mind:
    """Stands in for the mind only as a sink for percepts (the bridge's one use of it)."""

    def replace_percept(self, term):
        pass

    def drop_percepts(self, functor, arity):
        pass


def test_shared_experience_teaches_a_teammate_exactly_what_the_sharer_saw(tmp_path):
    """Replaying a teammate's transitions gives the same Q-updates as living them."""
    sharer, receiver, twin = _bridge(tmp_path, seed=1), _bridge(tmp_path, seed=2), _bridge(tmp_path, seed=3)
    for bridge in (sharer, receiver, twin):
        bridge.mind = _Mind()
    sharer.record_experience()
    seen = []
    for _ in range(300):
        sharer.run_episode()
    batches = sharer.take_experience()
    assert sharer.take_experience() == ()  # taken once
    assert all(len(b) <= EXPERIENCE_CHARS for b in batches) and len(batches) > 1
    for batch in batches:
        receiver.replay(batch)
        for item in batch.split(";"):
            s, a, r, s2, done = item.split(",")
            seen.append((int(s), int(a), float(r), int(s2), done == "1"))
    assert len(seen) == sharer.stats.env_steps == receiver.stats.replayed_steps
    assert receiver.learner.env_steps == 0 and receiver.stats.env_steps == 0
    for transition in seen:
        twin.learner.update(*transition)
    np.testing.assert_array_equal(receiver.learner.q, twin.learner.q)
    assert any(r == 1.0 for _, _, r, _, _ in seen)  # goals were reached and shared


@pytest.mark.parametrize("text, message", [
    ("0,1,0", "malformed transition"),
    ("0,1,x,2,0", "malformed transition"),
    ("0,1,0,99,0", "outside this Q-table"),
    ("0,7,0,1,0", "outside this Q-table"),
])
def test_malformed_experience_is_refused_whole(tmp_path, text, message):
    bridge = _bridge(tmp_path)
    before = bridge.learner.q.copy()
    with pytest.raises(ValueError, match=message):
        bridge.replay("1,2,0,5,0;" + text)
    np.testing.assert_array_equal(bridge.learner.q, before)  # not half-applied


def test_a_hazard_caps_the_moves_that_may_land_on_it(tmp_path):
    """FrozenLake 4x4 has a hole at (1, 1); slippery moves reach it with probability 1/3."""
    bridge = _bridge(tmp_path, config=LearningConfig(q_init=1.0))
    q = bridge.learner.q
    bridge.hazard(1, 1)
    hole = bridge.env.state_at(1, 1)
    risky = {(s, a) for s, a, _ in bridge.env.arrivals(hole)}
    assert (1, 1) in risky and (4, 2) in risky and (0, 1) not in risky  # DOWN from (1,0), RIGHT from (0,1)
    for s in range(q.shape[0]):
        for a in range(q.shape[1]):
            expected = 2 / 3 if (s, a) in risky else 1.0
            assert q[s, a] == pytest.approx(expected), (s, a)
    with pytest.raises(ValueError, match="not a cell"):
        bridge.hazard(9, 9)


def test_a_goal_raises_the_floor_of_the_moves_that_may_reach_it(tmp_path):
    bridge = _bridge(tmp_path)  # q_init 0
    goal = bridge.env.state_at(3, 3)
    bridge.goal(3, 3, 1.0)
    arrivals = bridge.env.arrivals(goal)
    assert arrivals
    for s, a, p in arrivals:
        assert bridge.learner.q[s, a] == pytest.approx(p)
    assert bridge.learner.q.sum() == pytest.approx(sum(p for *_, p in arrivals))
