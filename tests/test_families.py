"""Env families (rl.families): the family chosen where an env is made is the one a reader
finds again from the name the trace records, and a map cell maps back to its state."""

from __future__ import annotations

import pytest

from bdi_rl.rl.envs import make_env
from bdi_rl.rl.families import FAMILIES, GENERIC, family_named, family_of_id, world_cell, world_state


@pytest.mark.parametrize("env_id", ["FrozenLake-v1", "CliffWalking-v1", "Taxi-v4"])
def test_a_grid_worlds_family_round_trips_through_its_map(env_id: str) -> None:
    env = make_env(env_id)
    try:
        world = env.world()
        assert world is not None
        assert family_named(world["family"]) is env.family is family_of_id(env_id)
        assert env.action_names == list(env.family.action_names)
        for s in range(env.n_states):
            cell = world_cell(world, s)
            assert 0 <= cell["x"] < world["cols"] and 0 <= cell["y"] < world["rows"]
            assert world_state(world, cell["x"], cell["y"], cell) == s
    finally:
        env.close()


def test_each_family_has_its_own_name_and_an_unknown_name_is_a_plain_grid() -> None:
    assert len({family.name for family in FAMILIES}) == len(FAMILIES)
    world = {"family": "some-future-env", "rows": 2, "cols": 3, "map": ["...", "..."]}
    assert family_named(world["family"]) is GENERIC
    assert world_cell(world, 5) == {"x": 2, "y": 1} and world_state(world, 2, 1) == 5
    assert family_of_id("mypkg.envs:Maze") is GENERIC
