"""The internal actions: the one bridge between plans and the Q-learner."""

from __future__ import annotations

import agentspeak as asp
import agentspeak.stdlib as asp_stdlib

from bdi_rl.actions import RlBridge
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
