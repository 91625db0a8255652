"""Level-based foraging (lbforaging 2.0.0, Papoudakis et al. 2021) as a tabular PettingZoo ``ParallelEnv``.

The world is lbforaging's ``Foraging-5x5-2p-1f-coop-v3``: a 5x5 grid, two players, one
food. Each player's level is 1 or 2 (drawn per episode); in the cooperative variant the
food's level is always the *sum* of the two levels, so it is eaten only when both players
stand next to it (north, south, west or east of it, not diagonally) and both ``LOAD`` in
the same step. Then the episode ends, each player earning ``own level / (sum of levels)``:
the team's reward sums to exactly 1 (1/2 + 1/2, or 1/3 + 2/3). Nothing else is rewarded
(no penalty). After 50 steps without eating, the episode is cut.

Agents ``player_0`` and ``player_1`` (lbforaging's players 0 and 1), each with
``Discrete(6)`` actions (:class:`Action`: NONE, NORTH, SOUTH, WEST, EAST, LOAD; NORTH is row
- 1). An invalid action (into a wall or the food, LOAD with no food next to the player) is
NONE; two players moving into one cell both stay.

**Observations.** lbforaging gives each player a ``Box(9,)`` of floats: the food's (row,
col, level) or (-1, -1, 0) once eaten, then the player's own (row, col, level), then the
other's. The sight is the whole grid, so positions are absolute and the other player is
always seen. Here that vector is one integer of ``Discrete(N_STATES)``, ``N_STATES =
10 * 25 * 25 * 2 * 2 = 25000``, mixed radix, most significant first (:func:`encode`,
:func:`decode`, :class:`ForagingObs`):

- the food: its cell index ``3 * (row - 1) + (col - 1)`` (lbforaging spawns it on the
  3x3 interior, rows and columns 1..3; it never moves), or 9 once eaten (10 values);
- the own position ``5 * row + col`` (25), the other player's likewise (25);
- the own level - 1 and the other's level - 1 (2 each).

The food's level is not encoded: it is the sum of the two levels while the food is there,
0 once eaten, so the encoding is lossless (:func:`to_array` rebuilds lbforaging's vector
exactly; the tests check it on every observation of many episodes). The levels change
no decision (both players must always load together) but they set each player's share of
the reward, so a state without them would not be Markov in the reward: they stay in. Of
the 25000 integers, those with two players in one cell or a player on the food never
occur (players never overlap nor enter the food's cell); 9 * 24 * 23 * 4 = 19872 states
with food are reachable, and the terminal "eaten" ones only with both players next to
where the food was.

**Differences from lbforaging's gymnasium env**, which the adapter works around:

- its time limit ends the episode as *terminated*; here eating the food terminates and the
  50th step without eating *truncates* (so a learner bootstraps there);
- its ``reset(seed)`` is not reproducible on one env object: a player's spawn cell must
  differ from every player's cell *of the previous episode*. The adapter forgets the
  players' positions before each reset, so a seed gives the same episode on any object,
  and an unseeded reset continues the seeded stream;
- ``import lbforaging`` registers ~1,900 gymnasium ids (~0.3 s): it is imported by the
  first env built, not by this module. Rendering (pyglet) is never imported.

**Optimum** (measured over the exact transition graph of lbforaging's own ``step``,
``python -m bdi_rl.rl.foraging``, ~20 s): an optimal team always eats the food, team
return 1.0 (undiscounted; with discount ``gamma``, ``gamma ** (length - 1)``), in 3.47
steps on average over 20000 of lbforaging's seeded starts (median 3, min 1, max 6; the
worst start over every food cell and pair of player cells also needs 6). The last step
is the joint LOAD.

Named in a spec like any env entry point: ``bdi_rl.rl.foraging:LevelBasedForaging``.
"""

from __future__ import annotations

import enum
from typing import Any, Final, NamedTuple

import numpy as np
from gymnasium.spaces import Discrete
from pettingzoo import ParallelEnv

from bdi_rl.rl.families import LB_FORAGING
from bdi_rl.rl.sharedworld import checked_joint_action

__all__ = [
    "ENV_ID",
    "INNER_KWARGS",
    "MAX_STEPS",
    "N_STATES",
    "Action",
    "ForagingObs",
    "LevelBasedForaging",
    "decode",
    "encode",
    "from_array",
    "to_array",
]

#: The lbforaging id this env reproduces (its registered kwargs are :data:`INNER_KWARGS`).
ENV_ID: Final = "Foraging-5x5-2p-1f-coop-v3"
SIZE: Final = 5
MAX_STEPS: Final = 50
#: ``lbforaging.foraging.ForagingEnv``'s arguments, as lbforaging registers :data:`ENV_ID`.
INNER_KWARGS: Final[dict[str, Any]] = {
    "players": 2,
    "min_player_level": 1,
    "max_player_level": 2,
    "field_size": (SIZE, SIZE),
    "min_food_level": 1,
    "max_food_level": None,
    "max_num_food": 1,
    "sight": SIZE,
    "max_episode_steps": MAX_STEPS,
    "force_coop": True,
    "grid_observation": False,
    "penalty": 0.0,
}

FOOD_VALUES: Final = 10  # 9 interior cells + eaten
EATEN: Final = 9
CELLS: Final = SIZE * SIZE
LEVELS: Final = 2
N_STATES: Final = FOOD_VALUES * CELLS * CELLS * LEVELS * LEVELS


class Action(enum.IntEnum):
    """lbforaging's actions (``lbforaging.foraging.environment.Action``), by value."""

    NONE = 0
    NORTH = 1
    SOUTH = 2
    WEST = 3
    EAST = 4
    LOAD = 5


class ForagingObs(NamedTuple):
    """One player's observation: cells are (row, col); levels are 1 or 2."""

    food: tuple[int, int] | None
    """the food's cell, None once eaten"""
    own: tuple[int, int]
    other: tuple[int, int]
    own_level: int
    other_level: int


def encode(obs: ForagingObs) -> int:
    """The state index of ``obs`` (see the module docstring for the layout)."""
    if obs.food is None:
        food = EATEN
    else:
        r, c = obs.food
        if not (1 <= r <= SIZE - 2 and 1 <= c <= SIZE - 2):
            raise ValueError(f"foraging: the food is on the 3x3 interior, got {obs.food!r}")
        food = 3 * (r - 1) + (c - 1)
    index = food
    for r, c in (obs.own, obs.other):
        if not (0 <= r < SIZE and 0 <= c < SIZE):
            raise ValueError(f"foraging: a player's cell must be on the {SIZE}x{SIZE} grid, got {(r, c)!r}")
        index = index * CELLS + SIZE * r + c
    for level in (obs.own_level, obs.other_level):
        if level not in (1, 2):
            raise ValueError(f"foraging: a player's level is 1 or 2, got {level!r}")
        index = index * LEVELS + level - 1
    return index


def decode(index: int) -> ForagingObs:
    """The observation of state ``index``: ``decode(encode(obs)) == obs``."""
    if not 0 <= index < N_STATES:
        raise ValueError(f"foraging: a state is in [0, {N_STATES}), got {index!r}")
    index, other_level = divmod(index, LEVELS)
    index, own_level = divmod(index, LEVELS)
    index, other = divmod(index, CELLS)
    food, own = divmod(index, CELLS)
    return ForagingObs(
        food=None if food == EATEN else (1 + food // 3, 1 + food % 3),
        own=divmod(own, SIZE),
        other=divmod(other, SIZE),
        own_level=own_level + 1,
        other_level=other_level + 1,
    )


def from_array(vector: np.ndarray) -> ForagingObs:
    """lbforaging's ``Box(9,)`` observation of one player as a :class:`ForagingObs`."""
    v = [int(x) for x in np.asarray(vector).tolist()]
    if len(v) != 9 or np.asarray(vector).tolist() != v:
        raise ValueError(f"foraging: expected lbforaging's 9 integral floats, got {vector!r}")
    fr, fc, _food_level, r0, c0, l0, r1, c1, l1 = v
    return ForagingObs(None if fr < 0 else (fr, fc), (r0, c0), (r1, c1), l0, l1)


def to_array(obs: ForagingObs) -> np.ndarray:
    """lbforaging's vector for ``obs`` (the inverse of :func:`from_array` on its observations)."""
    food = [-1, -1, 0] if obs.food is None else [*obs.food, obs.own_level + obs.other_level]
    return np.array([*food, *obs.own, obs.own_level, *obs.other, obs.other_level], dtype=np.float32)


# pettingzoo 1.27 ships no type information (no py.typed): to mypy ParallelEnv is Any, which
# strict mode refuses as a base (misc).
class LevelBasedForaging(ParallelEnv[str, int, int]):  # type: ignore[misc]
    """lbforaging's 5x5, 2-player, 1-food cooperative world with one ``Discrete`` state per
    player (module docstring: the encoding, what differs from lbforaging, the optimum).

    ``infos`` give each player its ``level`` and the world's ``step``; ``render`` is not
    supported. ``seed`` seeds the world and the action spaces' ``sample``.
    """

    metadata: dict[str, Any] = {"name": "lbforaging_5x5_2p_1f_coop_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(self) -> None:
        from lbforaging.foraging.environment import ForagingEnv  # registers lbforaging's ids: lazy

        self._inner = ForagingEnv(**INNER_KWARGS)
        self.possible_agents = ["player_0", "player_1"]
        self.agents: list[str] = []
        self.render_mode = None
        self._observation_spaces = {agent: Discrete(N_STATES) for agent in self.possible_agents}
        self._action_spaces = {agent: Discrete(len(Action)) for agent in self.possible_agents}
        self._steps = 0

    def observation_space(self, agent: str) -> Discrete:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> Discrete:
        return self._action_spaces[agent]

    def _observe(self, raw: tuple[np.ndarray, ...]) -> dict[str, int]:
        return {agent: encode(from_array(vector)) for agent, vector in zip(self.possible_agents, raw, strict=True)}

    def _infos(self) -> dict[str, dict[str, Any]]:
        pairs = zip(self.possible_agents, self._inner.players, strict=True)
        return {agent: {"level": int(player.level), "step": self._steps} for agent, player in pairs}

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, int], dict[str, dict[str, Any]]]:
        if seed is not None:
            for i, agent in enumerate(self.possible_agents):
                self._action_spaces[agent].seed(seed + i)
        # lbforaging spawns a player only on a cell no player held at the end of the last
        # episode: forget those cells, or a seed's episode depends on the one before.
        for player in self._inner.players:
            player.position = None
        raw, _ = self._inner.reset(seed=seed)
        self._steps = 0
        self.agents = list(self.possible_agents)
        return self._observe(raw), self._infos()

    def step(
        self, actions: dict[str, int]
    ) -> tuple[dict[str, int], dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]]:
        joint = checked_joint_action(self, actions)
        raw, rewards, done, _, _ = self._inner.step(joint)
        self._steps += 1
        eaten = int(self._inner.field.sum()) == 0
        truncated = bool(done) and not eaten
        if done != (eaten or self._steps >= MAX_STEPS):
            raise RuntimeError(f"{self.metadata['name']}: lbforaging ended at step {self._steps}: food {eaten=}")
        agents = self.agents
        if done:
            self.agents = []
        return (
            self._observe(raw),
            {agent: float(r) for agent, r in zip(self.possible_agents, rewards, strict=True)},
            {agent: eaten for agent in agents},
            {agent: truncated for agent in agents},
            self._infos(),
        )

    @staticmethod
    def facts(index: int) -> dict[str, tuple[int, int] | None]:
        """What a player's state says, as ``(x, y)`` cells (x = column): its own position
        ``pos``, the other player's ``partner``, and the ``food`` (None once eaten). Seated
        agents perceive them as ``pos(X, Y)``, ``partner(X, Y)`` and ``food(X, Y)``."""
        obs = decode(index)
        return {
            "pos": (obs.own[1], obs.own[0]),
            "partner": (obs.other[1], obs.other[0]),
            "food": None if obs.food is None else (obs.food[1], obs.food[0]),
        }

    def grid(self) -> dict[str, Any]:
        """The map for readers (``trace.kinds.WorldData``): an open 5x5 field."""
        return {"family": LB_FORAGING.name, "rows": SIZE, "cols": SIZE, "map": ["." * SIZE] * SIZE}

    def cells(self) -> dict[str, list[list[int]]]:
        """Where things are now, for the trace: each player's ``[x, y]`` (x = column) in
        ``possible_agents`` order, and the food's ``[x, y, level]`` while it is there."""
        players = [[int(p.position[1]), int(p.position[0])] for p in self._inner.players]
        rows, cols = np.nonzero(self._inner.field)
        items = [[int(c), int(r), int(self._inner.field[r, c])] for r, c in zip(rows, cols, strict=True)]
        return {"positions": players, "items": items}

    def close(self) -> None:
        self._inner.close()


def _optimum(samples: int = 20000) -> dict[str, float]:
    """The optimal team's episode length, over lbforaging's own ``step``: for each food
    cell, every pair of player cells and every joint action, one step of the inner env
    gives the transition graph; a backward search from the joint LOADs that eat gives each
    start's fewest steps. Starts are drawn by the env's own resets (``samples`` seeds)."""
    env = LevelBasedForaging()
    inner = env._inner
    env.reset(seed=0)
    cells = [(r, c) for r in range(SIZE) for c in range(SIZE)]
    best: dict[tuple[tuple[int, int], tuple[int, int], tuple[int, int]], int] = {}
    returns = set()
    for fr in range(1, SIZE - 1):
        for fc in range(1, SIZE - 1):
            food = (fr, fc)
            states = [(a, b) for a in cells for b in cells if a != b and food not in (a, b)]
            preds: dict[tuple[tuple[int, int], tuple[int, int]], list[tuple[tuple[int, int], tuple[int, int]]]] = {}
            frontier = []
            for s in states:
                for a0 in Action:
                    for a1 in Action:
                        inner.current_step = 0
                        inner.field[:] = 0
                        inner.field[food] = 2
                        inner._food_spawned = 2
                        for p, cell in zip(inner.players, s, strict=True):
                            p.position, p.level = cell, 1
                        inner._gen_valid_moves()
                        _, rewards, _, _, _ = inner.step([int(a0), int(a1)])
                        if int(inner.field.sum()) == 0:
                            returns.add(round(sum(rewards), 12))
                            frontier.append(s)
                        else:
                            nxt = (tuple(inner.players[0].position), tuple(inner.players[1].position))
                            preds.setdefault(nxt, []).append(s)
            dist = {s: 1 for s in frontier}
            queue = list(dict.fromkeys(frontier))
            while queue:
                s = queue.pop(0)
                for p in preds.get(s, []):
                    if p not in dist:
                        dist[p] = dist[s] + 1
                        queue.append(p)
            for (a, b), d in dist.items():
                best[(food, a, b)] = d
    lengths = []
    for seed in range(samples):
        obs, _ = env.reset(seed=seed)
        o = decode(obs["player_0"])
        assert o.food is not None
        lengths.append(best[(o.food, o.own, o.other)])
    arr = np.array(lengths)
    return {
        "team_return": float(min(returns)) if len(returns) == 1 else float("nan"),
        "mean_length": float(arr.mean()),
        "median_length": float(np.median(arr)),
        "max_length": float(arr.max()),
        "min_length": float(arr.min()),
        "at_most_3": float((arr <= 3).mean()),
        "worst_start": float(max(best.values())),
    }


if __name__ == "__main__":
    print(_optimum())
