"""The Gymnasium adapter: construction errors, geometry, outcomes, time limits."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest
from gymnasium.spaces import Discrete

from bdi_rl.rl.envs import DEFAULT_MAX_EPISODE_STEPS, EnvAdapter, EnvError, make_env

LEFT, DOWN, RIGHT, UP = 0, 1, 2, 3
# S H      a 2x2 lake: right of the start is a hole, the goal is bottom-right
# F G
TINY_LAKE = ["SH", "FG"]


class TinyChain(gym.Env[int, int]):
    """A corridor of ``length`` cells; action 1 moves right, 0 stays; the last cell ends it."""

    def __init__(self, length: int = 3, reward: float = 1.0) -> None:
        self.observation_space = Discrete(length)
        self.action_space = Discrete(2)
        self.length = length
        self.reward = reward
        self.s = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        super().reset(seed=seed)
        self.s = 0
        return 0, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        self.s = min(self.s + int(action), self.length - 1)
        done = self.s == self.length - 1
        return self.s, self.reward if done else 0.0, done, False, {}


ENTRY = f"{__name__}:TinyChain"


def lake(**kw: Any) -> EnvAdapter:
    return make_env("FrozenLake-v1", {"desc": TINY_LAKE, "is_slippery": False}, **kw)


# -- construction ------------------------------------------------------------------------


def test_registered_sizes_and_limits() -> None:
    fl = make_env("FrozenLake-v1", {"map_name": "4x4"})
    assert (fl.n_states, fl.n_actions, fl.max_episode_steps) == (16, 4, 100)
    taxi = make_env("Taxi-v4")
    assert (taxi.n_states, taxi.n_actions, taxi.max_episode_steps) == (500, 6, 200)
    eight = make_env("FrozenLake-v1", {"map_name": "8x8"}, max_episode_steps=200)
    assert eight.max_episode_steps == 200


def test_cliffwalking_gets_a_default_time_limit() -> None:
    env = make_env("CliffWalking-v1")
    assert env.max_episode_steps == DEFAULT_MAX_EPISODE_STEPS
    env.reset(0)
    for _ in range(DEFAULT_MAX_EPISODE_STEPS - 1):
        _, _, term, trunc = env.step(UP)  # bumping into the top wall forever
        assert not (term or trunc)
    _, _, term, trunc = env.step(UP)
    assert trunc and not term
    assert env.outcome(-1.0, term, trunc) == "timeout"


def test_non_discrete_env_is_refused() -> None:
    with pytest.raises(EnvError, match="not Discrete") as info:
        make_env("CartPole-v1")
    assert 'env "CartPole-v1"' in str(info.value)
    assert "\n" not in str(info.value)


def test_unknown_id_is_refused() -> None:
    with pytest.raises(EnvError, match=r'env "Foo-v9": no such registered environment'):
        make_env("Foo-v9")


def test_bad_kwargs_are_refused_naming_the_env() -> None:
    with pytest.raises(EnvError, match=r'env "FrozenLake-v1": cannot be made with kwargs'):
        make_env("FrozenLake-v1", {"bogus": 1})
    with pytest.raises(EnvError, match=r'env "FrozenLake-v1": cannot be made with kwargs'):
        make_env("FrozenLake-v1", {"map_name": "5x5"})
    with pytest.raises(EnvError, match="cannot be made with kwargs"):
        make_env(ENTRY, {"colour": "red"})
    assert issubclass(EnvError, ValueError)


def test_entry_point_env() -> None:
    env = make_env(ENTRY, {"length": 4})
    assert (env.n_states, env.n_actions) == (4, 2)
    assert env.max_episode_steps == DEFAULT_MAX_EPISODE_STEPS
    assert env.reset(seed=1) == 0
    assert env.step(1) == (1, 0.0, False, False)
    assert env.step(1) == (2, 0.0, False, False)
    s2, r, term, trunc = env.step(1)
    assert (s2, r, term, trunc) == (3, 1.0, True, False)
    assert env.outcome(r, term, trunc) == "goal"
    assert env.position(2) is None and env.grid_shape is None


def test_entry_point_time_limit_and_failed_outcome() -> None:
    env = make_env(ENTRY, {"length": 3, "reward": -1.0}, max_episode_steps=2)
    assert env.max_episode_steps == 2
    env.reset()
    assert env.step(0) == (0, 0.0, False, False)
    assert env.step(0) == (0, 0.0, False, True)
    assert env.outcome(0.0, False, True) == "timeout"
    env.reset()
    env.step(1)
    _, r, term, trunc = env.step(1)
    assert term and r == -1.0
    assert env.outcome(r, term, trunc) == "failed"


@pytest.mark.parametrize(
    ("env_id", "match"),
    [
        ("no_such_module_xyz:Env", "cannot import module"),
        (f"{__name__}:Missing", "has no attribute"),
        (f"{__name__}:TINY_LAKE", "not a class"),
    ],
)
def test_bad_entry_points(env_id: str, match: str) -> None:
    with pytest.raises(EnvError, match=match):
        make_env(env_id)


# -- geometry and outcomes -------------------------------------------------------------------


def test_frozenlake_positions() -> None:
    env = make_env("FrozenLake-v1", {"map_name": "4x4"})
    assert env.grid_shape == (4, 4)
    assert env.position(0) == (0, 0)
    assert env.position(5) == (1, 1)
    assert env.position(6) == (2, 1)
    assert env.position(15) == (3, 3)


def test_cliffwalking_positions() -> None:
    env = make_env("CliffWalking-v1")
    assert env.grid_shape == (4, 12)
    assert env.position(36) == (0, 3)  # the start, bottom-left
    assert env.position(47) == (11, 3)  # the goal, bottom-right


def test_taxi_has_no_position_and_dropoff_is_goal() -> None:
    env = make_env("Taxi-v4")
    assert env.position(123) is None and env.grid_shape is None
    assert env.outcome(20.0, True, False) == "goal"
    assert env.outcome(-1.0, False, False) is None
    assert env.outcome(-1.0, False, True) == "timeout"


def test_frozenlake_outcomes_on_a_fixed_map() -> None:
    env = lake(max_episode_steps=3)
    assert env.grid_shape == (2, 2)

    env.reset(0)
    s2, r, term, trunc = env.step(RIGHT)
    assert (s2, r, term, trunc) == (1, 0.0, True, False)
    assert env.outcome(r, term, trunc) == "hole"

    env.reset()
    s2, r, term, trunc = env.step(DOWN)
    assert env.outcome(r, term, trunc) is None
    s2, r, term, trunc = env.step(RIGHT)
    assert (s2, r, term, trunc) == (3, 1.0, True, False)
    assert env.outcome(r, term, trunc) == "goal"

    env.reset()
    results = [env.step(LEFT) for _ in range(3)]
    assert [res[3] for res in results] == [False, False, True]
    assert env.outcome(results[-1][1], results[-1][2], results[-1][3]) == "timeout"
    # the limit restarts with each episode
    env.reset()
    assert env.step(LEFT)[3] is False


def test_step_returns_plain_python_types() -> None:
    env = make_env("Taxi-v4")
    env.reset(3)
    s2, r, term, trunc = env.step(0)
    assert type(s2) is int and type(r) is float
    assert isinstance(term, bool) and isinstance(trunc, bool)


def test_state_space_signature() -> None:
    by_name = make_env("FrozenLake-v1", {"map_name": "4x4"}).state_space_signature()
    by_desc = make_env(
        "FrozenLake-v1", {"desc": ["SFFF", "FHFH", "FFFH", "HFFG"], "is_slippery": False}
    ).state_space_signature()
    assert by_name == by_desc  # same map; slipperiness is dynamics, not state space
    assert by_name == {
        "env_id": "FrozenLake-v1",
        "kwargs": {"grid": "4x4"},
        "n_states": 16,
        "n_actions": 4,
    }
    moved = make_env("FrozenLake-v1", {"desc": ["SFFF", "FHFH", "FFFG", "HFFH"]})
    assert moved.state_space_signature() == by_name  # the goal moved: same cells, new task
    assert moved.task_signature() == {"desc": ["SFFF", "FHFH", "FFFG", "HFFH"]}
    eight = make_env("FrozenLake-v1", {"map_name": "8x8"}).state_space_signature()
    assert eight["n_states"] == 64 and eight != by_name
    taxi = make_env("Taxi-v4", {"is_rainy": True}).state_space_signature()
    assert taxi == {"env_id": "Taxi-v4", "kwargs": {}, "n_states": 500, "n_actions": 6}
    tiny = make_env(ENTRY, {"length": 5}).state_space_signature()
    assert tiny["kwargs"] == {"length": 5} and tiny["n_states"] == 5


def test_close() -> None:
    env = lake()
    env.close()
