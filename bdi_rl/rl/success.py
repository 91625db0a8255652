"""What counts as a successful episode, one rule per env kind.

The summary, the runs list, the curves, ``plot`` and ``export`` all read success from here
(or from the ``success`` the writer stored with each episode, computed here), so a number
called "success" means one thing for one env. Each rule is its family's
(``rl.families``); this module answers by the family's name, as a trace stores it. Plain
Python: readers import it without gymnasium.
"""

from __future__ import annotations

from bdi_rl.rl.families import FAMILIES, family_named, family_of_id

__all__ = ["SUCCESS_RULES", "family_of_env_id", "is_success"]

#: The rule of each env kind, as the README states it.
SUCCESS_RULES: dict[str, str] = {family.name: family.success_rule for family in FAMILIES}


def family_of_env_id(env_id: str | None) -> str:
    """The env kind of a Gymnasium id (``FrozenLake-v1`` -> ``frozenlake``); ``generic`` for
    others (readers of traces that predate the stored ``success``)."""
    return family_of_id(env_id).name


def is_success(family: str, outcome: str | None, episode_return: float | None) -> bool:
    """Whether an episode that ended as ``outcome`` with ``episode_return`` succeeded.

    ``outcome`` is :meth:`bdi_rl.rl.envs.EnvAdapter.outcome`'s: "goal" means terminated at
    the goal (any family) or with a positive reward (others)."""
    return family_named(family).is_success(outcome, episode_return)
