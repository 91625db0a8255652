"""What counts as a successful episode, one rule per env kind.

The summary, the runs list, the curves, ``plot`` and ``export`` all read success from here
(or from the ``success`` the writer stored with each episode, computed here), so a number
called "success" means one thing for one env. Plain Python: readers import it without
gymnasium.
"""

from __future__ import annotations

__all__ = ["SUCCESS_RULES", "family_of_env_id", "is_success"]

#: The rule of each env kind, as the README states it.
SUCCESS_RULES: dict[str, str] = {
    "frozenlake": "reached the goal tile",
    "cliffwalking": "reached the goal (the optimal -13 included: the cliff only sends you back)",
    "taxi": "delivered the passenger with a positive return (a delivery after many illegal moves is not)",
    "matrixgame": "the joint action paid the game's optimum (climbing 11, penalty 10, consensus 1)",
    "lbforaging": "the players ate the food together before the step limit",
    "generic": "ended by termination with a positive last reward",
}

_FAMILY_BY_ID_PREFIX = (
    ("FrozenLake", "frozenlake"),
    ("CliffWalking", "cliffwalking"),
    ("Taxi", "taxi"),
    ("climbing_game", "matrixgame"),
    ("penalty_game", "matrixgame"),
    ("consensus_game", "matrixgame"),
    ("lbforaging", "lbforaging"),
)


def family_of_env_id(env_id: str | None) -> str:
    """The env kind of a Gymnasium id (``FrozenLake-v1`` -> ``frozenlake``); ``generic`` for
    others (readers of traces that predate the stored ``success``)."""
    name = (env_id or "").split(":")[-1]
    return next((family for prefix, family in _FAMILY_BY_ID_PREFIX if name.startswith(prefix)), "generic")


def is_success(family: str, outcome: str | None, episode_return: float | None) -> bool:
    """Whether an episode that ended as ``outcome`` with ``episode_return`` succeeded.

    ``outcome`` is :meth:`bdi_rl.rl.envs.EnvAdapter.outcome`'s: "goal" means terminated at
    the goal (any family) or with a positive reward (others)."""
    if outcome != "goal":
        return False
    if family == "taxi":
        return episode_return is not None and episode_return > 0
    return True
