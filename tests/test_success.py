"""One definition of success per env kind (issue 18): evaluation, episodes and readers agree."""

from __future__ import annotations

import numpy as np

from bdi_rl.rl.envs import make_env
from bdi_rl.rl.qlearning import QLearner, evaluate
from bdi_rl.rl.success import family_of_env_id, is_success

UP, RIGHT, DOWN = 0, 1, 2  # CliffWalking's actions


def test_cliffwalking_at_the_optimal_minus_13_is_a_success() -> None:
    """The summary said 0.000 here while the plot said 1.0: a greedy walk along the cliff."""
    env = make_env("CliffWalking-v1")
    learner = QLearner(env.n_states, env.n_actions, seed=0)
    q = np.zeros((env.n_states, env.n_actions))
    q[36, UP] = 1.0  # start (row 3, col 0): up, right along row 2 to col 11, down to the goal
    for col in range(11):
        q[24 + col, RIGHT] = 1.0
    q[35, DOWN] = 1.0
    learner.q[:] = q
    result = evaluate(env, learner, 3, seed=0)
    assert result.mean_return == -13.0
    assert result.success_rate == 1.0


def test_a_taxi_delivery_with_a_negative_return_is_not_a_success() -> None:
    """A delivery after hundreds of moves (return -677) counted as a success on the plot."""
    assert is_success("taxi", "goal", 8.0)
    assert not is_success("taxi", "goal", -677.0)
    assert not is_success("taxi", "timeout", -200.0)


def test_frozenlake_and_other_envs_succeed_at_the_goal_only() -> None:
    assert is_success("frozenlake", "goal", 1.0)
    assert not is_success("frozenlake", "hole", 0.0)
    assert not is_success("frozenlake", "timeout", 0.0)
    assert is_success("generic", "goal", 1.0)
    assert not is_success("generic", "failed", -1.0)


def test_env_ids_name_their_kind_for_traces_that_predate_stored_success() -> None:
    assert family_of_env_id("FrozenLake-v1") == "frozenlake"
    assert family_of_env_id("CliffWalking-v1") == "cliffwalking"
    assert family_of_env_id("Taxi-v4") == "taxi"
    assert family_of_env_id("mypkg.envs:Maze") == "generic"
    assert family_of_env_id(None) == "generic"
