"""Tabular Q-learning: update arithmetic, policies, schedules, reproducibility, learning."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from bdi_rl.rl.envs import EnvAdapter, make_env
from bdi_rl.rl.qlearning import LearningConfig, QLearner, evaluate, run_episode

LEFT, DOWN, RIGHT, UP = 0, 1, 2, 3


def frozen(slippery: bool, max_episode_steps: int | None = None) -> EnvAdapter:
    kwargs = {"map_name": "4x4", "is_slippery": slippery}
    return make_env("FrozenLake-v1", kwargs, max_episode_steps)


def train(env: EnvAdapter, learner: QLearner, episodes: int, seed: int) -> None:
    run_episode(env, learner, seed=seed)
    for _ in range(episodes - 1):
        run_episode(env, learner)


# -- config ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"gamma": 1.5}, r"learning\.gamma: must be in \[0, 1\], got 1\.5"),
        ({"alpha": 0.0}, r"learning\.alpha: must be in \(0, 1\]"),
        ({"epsilon_end": -0.1}, r"learning\.epsilon_end"),
        ({"epsilon_decay_episodes": -1}, r"learning\.epsilon_decay_episodes"),
        ({"epsilon_decay_episodes": 2.5}, r"learning\.epsilon_decay_episodes"),
        ({"alpha": "0.1"}, r"learning\.alpha: must be a number"),
        ({"alpha_min": 0.5, "alpha": 0.1}, r"learning\.alpha_min: must be in \(0, 0\.1\]"),
        ({"alpha_decay": 0.99}, r"learning\.alpha_decay: has no effect without"),
        ({"q_init": float("nan")}, r"learning\.q_init"),
    ],
)
def test_config_validation_names_the_field(kw: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        LearningConfig(**kw)


def test_epsilon_schedule_endpoints() -> None:
    cfg = LearningConfig(epsilon_start=1.0, epsilon_end=0.1, epsilon_decay_episodes=10)
    assert cfg.epsilon_at(0) == 1.0
    assert cfg.epsilon_at(5) == pytest.approx(0.55)
    assert cfg.epsilon_at(10) == 0.1
    assert cfg.epsilon_at(1000) == 0.1
    learner = QLearner(2, 2, cfg, seed=0)
    assert learner.epsilon == 1.0
    for _ in range(10):
        learner.end_episode()
    assert learner.episodes == 10 and learner.epsilon == 0.1
    assert LearningConfig(epsilon_start=0.3, epsilon_decay_episodes=0).epsilon_at(0) == 0.05


def test_alpha_decays_to_its_floor() -> None:
    learner = QLearner(2, 2, LearningConfig(alpha=0.5, alpha_min=0.1, alpha_decay=0.5), seed=0)
    seen = [learner.alpha]
    for _ in range(4):
        learner.end_episode()
        seen.append(learner.alpha)
    assert seen == [0.5, 0.25, 0.125, 0.1, 0.1]
    assert QLearner(2, 2, LearningConfig(alpha=0.3), seed=0).alpha == 0.3


def test_set_epsilon_replaces_the_schedules_value_and_the_schedule_goes_on_from_it() -> None:
    """.rl_set_epsilon: a value set between episodes (a reaction to one's end) is the next
    episode's, then epsilon falls at the schedule's pace, never below epsilon_end."""
    config = LearningConfig(epsilon_start=1.0, epsilon_end=0.2, epsilon_decay_episodes=8)  # 0.1 an episode
    learner = QLearner(2, 2, config, seed=0)
    learner.end_episode()
    learner.set_epsilon(0.5)
    seen = [learner.epsilon]
    for _ in range(5):
        learner.end_episode()
        seen.append(learner.epsilon)
    assert seen == pytest.approx([0.5, 0.4, 0.3, 0.2, 0.2, 0.2])
    learner.set_epsilon(0.0)  # at or below epsilon_end: it stays until set again
    for _ in range(3):
        learner.end_episode()
    assert learner.epsilon == 0.0
    with pytest.raises(ValueError):
        learner.set_epsilon(1.5)


def test_set_epsilon_after_the_decay_and_without_one() -> None:
    late = QLearner(2, 2, LearningConfig(epsilon_end=0.05, epsilon_decay_episodes=4), seed=0)
    for _ in range(10):
        late.end_episode()
    late.set_epsilon(0.5)  # raised after the schedule ended: it decays again at its pace
    late.end_episode()
    assert late.epsilon == pytest.approx(0.5 - 0.95 / 4)
    flat = QLearner(2, 2, LearningConfig(epsilon_start=0.1, epsilon_end=0.1), seed=0)
    flat.set_epsilon(0.3)
    flat.end_episode()
    assert flat.epsilon == 0.3  # a schedule that does not decay keeps the plan's value


def test_a_resumed_learner_keeps_the_epsilon_its_plan_set() -> None:
    config = LearningConfig(epsilon_start=1.0, epsilon_end=0.2, epsilon_decay_episodes=8)
    learner = QLearner(2, 2, config, seed=0)
    learner.end_episode()
    learner.set_epsilon(0.5)
    resumed = QLearner(2, 2, config, seed=0)
    resumed.restore(learner.q, learner.episodes, 0, epsilon=learner.epsilon)
    for one in (learner, resumed):
        one.end_episode()
    assert resumed.epsilon == learner.epsilon == pytest.approx(0.4)
    plain = QLearner(2, 2, config, seed=0)
    plain.restore(learner.q, 3, 0, epsilon=config.epsilon_at(3))
    plain.end_episode()
    assert plain.epsilon == config.epsilon_at(4)  # the schedule's own value: the schedule, exactly


# -- update and policies ---------------------------------------------------------------------


def test_update_arithmetic() -> None:
    learner = QLearner(3, 2, LearningConfig(alpha=0.5, gamma=0.9), seed=0)
    learner.q[0, 1] = 1.0
    learner.q[1] = [2.0, 4.0]
    # target = 1 + 0.9 * max(2, 4) = 4.6; Q <- 1 + 0.5 * (4.6 - 1) = 2.8
    before, after = learner.update(0, 1, 1.0, 1, terminated=False)
    assert before == 1.0
    assert after == pytest.approx(2.8)
    assert learner.q[0, 1] == pytest.approx(2.8)


def test_terminal_does_not_bootstrap() -> None:
    learner = QLearner(3, 2, LearningConfig(alpha=0.5, gamma=0.9), seed=0)
    learner.q[0, 1] = 1.0
    learner.q[1] = [2.0, 4.0]
    # target = r = 1: Q <- 1 + 0.5 * (1 - 1) = 1
    assert learner.update(0, 1, 1.0, 1, terminated=True) == (1.0, 1.0)


def test_truncation_still_bootstraps() -> None:
    env = frozen(False, max_episode_steps=1)
    cfg = LearningConfig(alpha=0.5, gamma=0.9, epsilon_start=0.0, epsilon_end=0.0)
    learner = QLearner(16, 4, cfg, seed=0)
    learner.q[0, RIGHT] = 0.2  # greedy: move right, into state 1 -- then the time limit hits
    learner.q[1] = [0.0, 0.0, 0.0, 0.8]
    seen = []
    res = run_episode(env, learner, on_step=lambda *args: seen.append(args))
    assert res.outcome == "timeout" and res.length == 1 and res.final_state == 1
    (s, a, r, s2, term, trunc, before, after) = seen[0]
    assert (s, a, r, s2, term, trunc) == (0, RIGHT, 0.0, 1, False, True)
    assert before == 0.2
    assert after == pytest.approx(0.2 + 0.5 * (0.9 * 0.8 - 0.2))
    assert learner.q[0, RIGHT] == after


def test_random_tie_breaking_reaches_every_tied_action() -> None:
    learner = QLearner(2, 4, LearningConfig(epsilon_start=0.0, epsilon_end=0.0), seed=0)
    learner.q[1] = [0.0, 1.0, 0.0, 1.0]
    act = Counter(learner.act(0) for _ in range(4000))
    greedy = Counter(learner.greedy(0) for _ in range(4000))
    for counts in (act, greedy):
        assert set(counts) == {0, 1, 2, 3}
        assert min(counts.values()) > 850
    assert {learner.act(1) for _ in range(200)} == {1, 3}
    assert {learner.greedy(1) for _ in range(200)} == {1, 3}


def test_epsilon_one_explores_uniformly() -> None:
    learner = QLearner(1, 3, LearningConfig(epsilon_start=1.0), seed=1)
    learner.q[0] = [0.0, 5.0, 0.0]
    counts = Counter(learner.act(0) for _ in range(3000))
    assert set(counts) == {0, 1, 2} and min(counts.values()) > 850


# -- the episode loop ------------------------------------------------------------------------


def test_run_episode_matches_act_and_update() -> None:
    """The inlined hot loop is the same algorithm as act() + update() + end_episode()."""
    cfg = LearningConfig(alpha=0.3, alpha_min=0.05, alpha_decay=0.99, gamma=0.95, epsilon_decay_episodes=30)
    fast_env, slow_env = frozen(True), frozen(True)
    fast, slow = QLearner(16, 4, cfg, seed=7), QLearner(16, 4, cfg, seed=7)
    train(fast_env, fast, 60, seed=3)
    for ep in range(60):
        s = slow_env.reset(3 if ep == 0 else None)
        while True:
            a = slow.act(s)
            s2, r, term, trunc = slow_env.step(a)
            slow.update(s, a, r, s2, term)
            slow.env_steps += 1
            s = s2
            if term or trunc:
                break
        slow.end_episode()
    assert np.array_equal(fast.q, slow.q)
    assert fast.env_steps == slow.env_steps and fast.epsilon == slow.epsilon


def test_same_seed_same_table_different_seed_different() -> None:
    tables = []
    for seed in (11, 11, 12):
        learner = QLearner(16, 4, LearningConfig(epsilon_decay_episodes=150), seed=seed)
        train(frozen(True), learner, 200, seed=5)
        tables.append(learner.q)
    assert np.array_equal(tables[0], tables[1])
    assert not np.array_equal(tables[0], tables[2])


def test_greedy_evaluation_changes_nothing() -> None:
    cfg = LearningConfig(epsilon_decay_episodes=100)
    plain, probed = QLearner(16, 4, cfg, seed=2), QLearner(16, 4, cfg, seed=2)
    env_a, env_b = frozen(True), frozen(True)
    train(env_a, plain, 100, seed=1)
    train(env_b, probed, 100, seed=1)
    snapshot = probed.q.copy()
    state = (probed.episodes, probed.env_steps, probed.epsilon, probed.alpha)
    result = evaluate(frozen(True), probed, 50, seed=9)
    assert result.episodes == 50 and 0.0 <= result.success_rate <= 1.0
    assert np.array_equal(probed.q, snapshot)
    assert (probed.episodes, probed.env_steps, probed.epsilon, probed.alpha) == state
    # and evaluation draws from its own stream: training continues bit-identically
    for env, learner in ((env_a, plain), (env_b, probed)):
        for _ in range(50):
            run_episode(env, learner)
    assert np.array_equal(plain.q, probed.q)


def test_replacing_the_table_is_honoured() -> None:
    """A warm start assigns a new array to ``q``; the loop must write into that one."""
    env = frozen(False)
    learner = QLearner(16, 4, LearningConfig(), seed=0)
    run_episode(env, learner, seed=0)
    old = learner.q
    old_copy = old.copy()
    new = np.full((16, 4), 0.5)
    learner.q = new
    for _ in range(5):
        run_episode(env, learner)
    assert learner.q is new and np.any(new != 0.5)
    assert np.array_equal(old, old_copy)


def test_frozenlake_4x4_deterministic_is_solved() -> None:
    env = frozen(False)
    cfg = LearningConfig(alpha=0.5, gamma=0.95, epsilon_decay_episodes=200)
    learner = QLearner(16, 4, cfg, seed=0)
    train(env, learner, 300, seed=0)
    result = evaluate(env, learner, 20, seed=0)
    assert result.success_rate == 1.0
    assert result.mean_length == 6.0  # the shortest path


def test_cliffwalking_learns_the_optimal_path_quickly() -> None:
    env = make_env("CliffWalking-v1")
    cfg = LearningConfig(alpha=0.5, gamma=0.99, epsilon_decay_episodes=50)
    learner = QLearner(env.n_states, env.n_actions, cfg, seed=0)
    train(env, learner, 150, seed=0)
    result = evaluate(env, learner, 5, seed=0)
    assert result.mean_return == -13.0 and result.mean_length == 13.0
    assert run_episode(env, learner, learn=False).outcome == "goal"


def test_a_restored_learner_goes_on_as_if_it_had_trained_all_along():
    """resume: the table (a copy), the counts, and both schedules at the restored episode."""
    config = LearningConfig(alpha=0.5, alpha_min=0.01, alpha_decay=0.99, epsilon_decay_episodes=100)
    trained = np.arange(16 * 4, dtype=np.float64).reshape(16, 4)
    learner = QLearner(16, 4, config, seed=0)
    learner.restore(trained, episodes=40, env_steps=321)
    assert np.array_equal(learner.q, trained) and learner.q is not trained
    assert (learner.episodes, learner.env_steps) == (40, 321)
    assert learner.epsilon == config.epsilon_at(40) and learner.alpha == config.alpha_at(40)
    with pytest.raises(ValueError, match="shape"):
        learner.load_table(np.zeros((8, 4)))
