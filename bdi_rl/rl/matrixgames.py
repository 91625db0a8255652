"""The cooperative matrix games of the MARL literature, as PettingZoo ``ParallelEnv`` s.

Two agents, one step per episode: each picks a row (``player_0``) or a column
(``player_1``) of a payoff matrix, both earn the same payoff, and the episode ends. There
is nothing to observe (one ``Discrete(1)`` observation, always 0), so the games test
coordination alone: which joint action a pair of independent learners settles on when each
sees only its own action and the common reward. Both games have a shared optimum that
independent Q-learning misses, because the optimum's neighbours carry heavy penalties
(Claus & Boutilier 1998; Matignon, Laurent & Le Fort-Piat 2012).

The spec will name them like any env entry point: ``bdi_rl.rl.matrixgames:ClimbingGame``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
from gymnasium.spaces import Discrete
from pettingzoo import ParallelEnv

from bdi_rl.rl.sharedworld import checked_joint_action

__all__ = [
    "CLIMBING_PAYOFF",
    "ClimbingGame",
    "ConsensusGame",
    "MatrixGame",
    "OneStepGame",
    "PenaltyGame",
    "penalty_payoff",
]

#: Claus & Boutilier (1998), Table 3: row = player_0's action, column = player_1's.
CLIMBING_PAYOFF: Final = ((11.0, -30.0, 0.0), (-30.0, 7.0, 6.0), (0.0, 0.0, 5.0))


def penalty_payoff(k: float = -100.0) -> tuple[tuple[float, ...], ...]:
    """Claus & Boutilier (1998), Table 2: ``[[k, 0, 10], [0, 2, 0], [10, 0, k]]``, ``k <= 0``."""
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not math.isfinite(k) or k > 0:
        raise ValueError(f"penalty game: k must be a finite number <= 0, got {k!r}")
    k = float(k)
    return ((k, 0.0, 10.0), (0.0, 2.0, 0.0), (10.0, 0.0, k))


# pettingzoo 1.27 ships no type information (no py.typed): to mypy ParallelEnv is Any, which
# strict mode refuses as a base (misc).
class OneStepGame(ParallelEnv[str, int, int]):  # type: ignore[misc]
    """A one-step common-payoff game of ``possible_agents``, following PettingZoo's Parallel
    API: ``reset`` makes every agent live and observe 0; ``step`` takes one action from each,
    gives all the payoff of the joint action (:meth:`joint_payoff`), terminates all and
    empties ``agents``. Nothing is random, so ``seed`` only seeds the action spaces' ``sample``.
    """

    metadata: dict[str, Any] = {"name": "one_step_game_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(self, actions: Sequence[int]) -> None:
        self.possible_agents = [f"player_{i}" for i in range(len(actions))]
        self.agents: list[str] = []
        self.render_mode = None
        self._observation_spaces = {agent: Discrete(1) for agent in self.possible_agents}
        self._action_spaces = {agent: Discrete(n) for agent, n in zip(self.possible_agents, actions, strict=True)}

    def joint_payoff(self, joint: list[int]) -> float:
        """What every agent earns for ``joint`` (one action per agent, in agent order)."""
        raise NotImplementedError

    def observation_space(self, agent: str) -> Discrete:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> Discrete:
        return self._action_spaces[agent]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, int], dict[str, dict[str, Any]]]:
        if seed is not None:
            for i, agent in enumerate(self.possible_agents):
                self._action_spaces[agent].seed(seed + i)
        self.agents = list(self.possible_agents)
        return {agent: 0 for agent in self.agents}, {agent: {} for agent in self.agents}

    def step(
        self, actions: dict[str, int]
    ) -> tuple[dict[str, int], dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]]:
        reward = self.joint_payoff(checked_joint_action(self, actions))
        agents, self.agents = self.agents, []
        return (
            {agent: 0 for agent in agents},
            {agent: reward for agent in agents},
            {agent: True for agent in agents},
            {agent: False for agent in agents},
            {agent: {} for agent in agents},
        )


class MatrixGame(OneStepGame):
    """A two-player, one-step common-payoff game on ``payoff`` (rows: ``player_0``'s
    actions, columns: ``player_1``'s)."""

    metadata: dict[str, Any] = {**OneStepGame.metadata, "name": "matrix_game_v0"}

    def __init__(self, payoff: Sequence[Sequence[float]]) -> None:
        table = np.asarray(payoff, dtype=np.float64)
        if table.ndim != 2 or 0 in table.shape or not np.isfinite(table).all():
            raise ValueError(f"matrix game: payoff must be a non-empty 2-D table of finite numbers, got {payoff!r}")
        self.payoff = table
        super().__init__(table.shape)

    def joint_payoff(self, joint: list[int]) -> float:
        return float(self.payoff[joint[0], joint[1]])

    def optimum(self) -> tuple[float, list[tuple[int, int]]]:
        """The best common payoff and every joint action (row, column) that earns it."""
        best = float(self.payoff.max())
        rows, cols = np.nonzero(self.payoff == best)
        return best, [(int(r), int(c)) for r, c in zip(rows, cols, strict=True)]


class ClimbingGame(MatrixGame):
    """The climbing game (Claus & Boutilier 1998): ``[[11, -30, 0], [-30, 7, 6], [0, 0, 5]]``.

    Optimum: joint action (0, 0), payoff 11. Independent learners drift to (1, 1) = 7 or
    (2, 2) = 5: against a partner that still explores, action 0 averages (11 - 30 + 0) / 3,
    the worst row, so each agent climbs away from it.
    """

    metadata: dict[str, Any] = {**MatrixGame.metadata, "name": "climbing_game_v0"}

    def __init__(self) -> None:
        super().__init__(CLIMBING_PAYOFF)


class PenaltyGame(MatrixGame):
    """The penalty game (Claus & Boutilier 1998): ``[[k, 0, 10], [0, 2, 0], [10, 0, k]]``,
    here with ``k = -100`` unless told.

    Optimum: joint action (0, 2) or (2, 0), payoff 10. Two optima the agents must agree on,
    and a miscoordination costs ``k``, so independent learners settle on the safe (1, 1) = 2.
    """

    metadata: dict[str, Any] = {**MatrixGame.metadata, "name": "penalty_game_v0"}

    def __init__(self, k: float = -100.0) -> None:
        super().__init__(penalty_payoff(k))
        self.k = float(k)


class ConsensusGame(OneStepGame):
    """An ``n``-player, one-step common-payoff game: every agent picks one of ``actions``;
    all earn 1 when they all picked the same, else 0. The smallest world of any size, for
    measuring how fast a shared world steps with 2, 4 or 8 agents (``bench/``).

    Optimum: any unanimous joint action, payoff 1.
    """

    metadata: dict[str, Any] = {**OneStepGame.metadata, "name": "consensus_game_v0"}

    def __init__(self, n: int = 2, actions: int = 2) -> None:
        for what, value, lo in (("n", n, 2), ("actions", actions, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= 1000:
                raise ValueError(f"consensus game: {what} must be an integer in [{lo}, 1000], got {value!r}")
        super().__init__([actions] * n)
        self.actions = actions

    def joint_payoff(self, joint: list[int]) -> float:
        return 1.0 if len(set(joint)) == 1 else 0.0

    def optimum(self) -> tuple[float, list[tuple[int, ...]]]:
        """Payoff 1, for every unanimous joint action."""
        return 1.0, [(a,) * len(self.possible_agents) for a in range(self.actions)]
