"""Evaluation during training (``eval_every``): greedy phases between training episodes."""

from __future__ import annotations

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
from bdi_rl.spec import SpecError, load_spec
from bdi_rl.trace.kinds import AGENT_START, EPISODE_END, EVAL, TraceLevel
from bdi_rl.trace.steps import expanded
from bdi_rl.trace.tracer import Tracer

PLANS = """
!go.
@go +!go <- while (not training_done) { .rl_run_episode }; .rl_evaluate; .rl_finish.
"""


def test_every_n_episodes_a_greedy_evaluation_is_traced_and_the_q_table_is_untouched(tmp_path):
    env = make_env("FrozenLake-v1", {"map_name": "4x4", "is_slippery": False})
    learner = QLearner(env.n_states, env.n_actions, LearningConfig(), seed=0)
    tracer = Tracer("run", "a@localhost", TraceLevel.EPISODE)
    session = EpisodeSession(env, learner, tracer, Percepts(), episodes=30, eval_episodes=4, eval_every=10, seed=0)
    bridge = RlBridge(
        session,
        CheckpointSchedule(session, tmp_path / "q.npz", {}),
        PolicyCache(session, None, None, "a"),
        lambda: None,
    )
    actions = Actions()
    bridge.register(actions)
    (tmp_path / "plans.asl").write_text(PLANS)
    session.percepts.mind = mind = load_mind(tmp_path / "plans.asl", actions, "a", tracer)
    unchanged = []
    evaluate = session.evaluate

    def evaluate_and_compare() -> None:
        before = learner.q.copy(), learner.epsilon, learner.episodes
        evaluate()
        unchanged.append(np.array_equal(before[0], learner.q) and before[1:] == (learner.epsilon, learner.episodes))

    session.evaluate = evaluate_and_compare
    mind.run(max_cycles=10_000)
    assert not mind.host.failures
    tracer.flush_record()
    events = list(expanded(tracer.pending))
    evals = [e["data"] for e in events if e["kind"] == EVAL]
    # at 10 and 20 during training; the plans' own evaluation at the end (30), not doubled
    assert [e["after_episodes"] for e in evals] == [10, 20, 30]
    assert all(e["episodes"] == 4 for e in evals)
    kinds = [e["kind"] for e in events if e["kind"] in (EPISODE_END, EVAL)]
    assert kinds.index(EVAL) == 10 and kinds[21] == EVAL  # right after episodes 10 and 20
    assert all(isinstance(e["data"]["success"], bool) for e in events if e["kind"] == EPISODE_END)
    assert unchanged == [True, True]  # evaluating changes no Q-value, epsilon or count
    training = session.stats.training
    assert training is not None and training.end is not None
    assert len(training.pauses) == 2  # the evaluations during training, not the final one
    assert 0 < training.seconds(now=training.end) < training.end - training.start


def test_eval_every_without_evaluation_episodes_is_refused(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(
        'name = "x"\neval_every = 10\neval_episodes = 0\n[env]\nid = "FrozenLake-v1"\n'
        '[[agents]]\nname = "learner"\nasl = "learner.asl"\n'
    )
    with pytest.raises(SpecError, match=r"s\.toml: eval_every: .*eval_episodes of at least 1"):
        load_spec(spec)


def test_the_multi_process_summary_leaves_evaluations_during_training_out_of_training_time():
    """The telemetry role's summary (``bdi-rl telemetry``, compose) times training from the
    events: an evaluation between episodes is not training; the final one is after it."""
    from bdi_rl.xmpp.telemetry import AgentStats

    stats = AgentStats()
    events = [
        (AGENT_START, 100.0, {}),
        (EPISODE_END, 104.0, {"length": 5}),
        (EVAL, 107.0, {"seconds": 3.0}),
        (EPISODE_END, 110.0, {"length": 5}),
        (EVAL, 112.0, {"seconds": 2.0}),
    ]
    for kind, ts, data in events:
        stats.add({"kind": kind, "ts": ts, "data": data})
    assert stats.train_seconds == 7.0 and stats.env_steps == 10
