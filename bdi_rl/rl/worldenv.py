"""A multi-agent env several bdi-rl agents act in together: one PettingZoo world, one seat
per agent.

:func:`make_world` builds the world a spec's ``[env]`` names when the spec has a ``[world]``
table: a shipped id (:data:`WORLDS`) or a ``module:callable`` returning a PettingZoo
``ParallelEnv``, or an ``AECEnv`` (turned into a ParallelEnv by PettingZoo's own
``aec_to_parallel``). Every agent's observation and action space must be ``Discrete`` and
start at 0: each seat's learner is an ordinary tabular ``QLearner``.

A :class:`Seat` is what one agent's :class:`~bdi_rl.bdi.episode.EpisodeSession` sees of the
world: the sizes, the outcome and success rules, the signatures a checkpoint keeps, as an
``EnvAdapter`` offers them for a single-agent env. It never steps by itself: the world steps
once every live agent has chosen (``bdi.world``), and hands each seat its own transition.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from gymnasium.spaces import Discrete

from bdi_rl.rl.envs import DEFAULT_MAX_EPISODE_STEPS, EnvError
from bdi_rl.rl.families import GENERIC, LB_FORAGING, MATRIX_GAME, Family
from bdi_rl.rl.qlearning import EvalResult
from bdi_rl.rl.sharedworld import JointStep, joint_step

if TYPE_CHECKING:  # imported when a world is made: a Gym run never needs PettingZoo (~20 ms)
    from pettingzoo import ParallelEnv

__all__ = ["WORLDS", "Seat", "World", "is_world_id", "make_world"]


def _climbing() -> ParallelEnv:
    from bdi_rl.rl.matrixgames import ClimbingGame

    return ClimbingGame()


def _penalty(k: float = -100.0) -> ParallelEnv:
    from bdi_rl.rl.matrixgames import PenaltyGame

    return PenaltyGame(k)


def _consensus(n: int = 2, actions: int = 2) -> ParallelEnv:
    from bdi_rl.rl.matrixgames import ConsensusGame

    return ConsensusGame(n, actions)


def _foraging() -> ParallelEnv:
    from bdi_rl.rl.foraging import LevelBasedForaging

    return LevelBasedForaging()


#: The worlds shipped with bdi-rl, by the id a spec's ``[env] id`` gives them (their
#: PettingZoo ``metadata["name"]``), and their env family (``rl.families``).
WORLDS: Final[dict[str, tuple[Callable[..., ParallelEnv], Family]]] = {
    "climbing_game_v0": (_climbing, MATRIX_GAME),
    "penalty_game_v0": (_penalty, MATRIX_GAME),
    "consensus_game_v0": (_consensus, MATRIX_GAME),
    "lbforaging_5x5_2p_1f_coop_v0": (_foraging, LB_FORAGING),
}


def is_world_id(env_id: str) -> bool:
    """Whether ``env_id`` is a shipped world (a spec naming one needs a ``[world]`` table)."""
    return env_id in WORLDS


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def make_world(env_id: str, kwargs: dict[str, Any] | None = None, max_episode_steps: int | None = None) -> World:
    """The world ``env_id`` names, built with ``kwargs``; every failure is an EnvError."""
    kw = dict(kwargs or {})
    family = GENERIC
    if env_id in WORLDS:
        factory, family = WORLDS[env_id]
    elif ":" in env_id:
        module_name, _, attr = env_id.partition(":")
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            raise EnvError(f'env "{env_id}": cannot import module "{module_name}": {_one_line(exc)}') from exc
        target = getattr(module, attr, None)
        if not callable(target):
            raise EnvError(f'env "{env_id}": module "{module_name}" has no class or factory "{attr}"')
        factory = target
    else:
        shipped = ", ".join(WORLDS)
        raise EnvError(f'env "{env_id}": not a shipped world ({shipped}) nor a "module:callable" entry point')
    try:
        env = factory(**kw)
    except Exception as exc:
        raise EnvError(f'env "{env_id}": cannot be made with kwargs {kw!r:.120}: {_one_line(exc)}') from exc
    from pettingzoo import AECEnv, ParallelEnv

    if isinstance(env, AECEnv):
        from pettingzoo.utils.conversions import aec_to_parallel

        env = aec_to_parallel(env)
    if not isinstance(env, ParallelEnv):
        kind = type(env).__name__
        raise EnvError(f'env "{env_id}": the entry point returned {kind}, not a PettingZoo ParallelEnv or AECEnv')
    return World(env, env_id, kw, family, max_episode_steps)


@dataclass
class Seat:
    """One agent's place in a world, with the part of ``EnvAdapter``'s interface an
    ``EpisodeSession``, a checkpoint and the trace use."""

    host: World
    agent: str
    """the env's name of this agent (``player_0``)"""
    n_states: int
    n_actions: int
    #: A seat's facts are its world's (``facts``, perceived by ``bdi.seat``), not a state's.
    has_state_facts = False

    @property
    def env_id(self) -> str:
        return self.host.env_id

    @property
    def kwargs(self) -> dict[str, Any]:
        return self.host.kwargs

    @property
    def max_episode_steps(self) -> int:
        return self.host.max_episode_steps

    @property
    def action_names(self) -> list[str]:
        return [f"a{a}" for a in range(self.n_actions)]

    grid_shape = None

    def position(self, s: int) -> tuple[int, int] | None:
        """This agent's ``(x, y)`` in state ``s`` on a grid world (its ``pos(X, Y)``)."""
        return self.facts(s).get("pos")

    def facts(self, s: int) -> dict[str, tuple[int, int] | None]:
        """What state ``s`` says, by percept name (``pos``, ``partner``, ``food`` on
        lbforaging; None: not there now), from the env's ``facts(s)``; none for other worlds."""
        facts = getattr(self.host.env, "facts", None)
        return facts(s) if callable(facts) else {}

    def world(self) -> dict[str, Any] | None:  # EnvAdapter.world: no grid to draw
        return None

    def outcome(self, r: float, terminated: bool, truncated: bool) -> str | None:
        """``goal`` when this agent's episode ended on the world's success (the optimum of a
        matrix game, the food eaten), ``failed`` on another termination, ``timeout`` on a
        truncation; None while it runs."""
        if terminated:
            return "goal" if self.host.succeeded(r) else "failed"
        if truncated:
            return "timeout"
        return None

    def success(self, outcome: str | None, episode_return: float) -> bool:
        return self.host.family.is_success(outcome, episode_return)

    def state_space_signature(self) -> dict[str, Any]:
        return {
            "env_id": self.host.env_id,
            "kwargs": dict(sorted(self.host.kwargs.items())),
            "agent": self.agent,
            "n_states": self.n_states,
            "n_actions": self.n_actions,
        }

    def task_signature(self) -> dict[str, Any]:
        return {}

    def arrivals(self, s2: int) -> list[tuple[int, int, float]]:
        raise EnvError(f'env "{self.host.env_id}": priors need a grid world\'s transition table')

    def reset(self, seed: int | None = None) -> int:
        raise RuntimeError("a seat does not reset by itself: the world resets once every agent asked")

    def step(self, a: int) -> tuple[int, float, bool, bool]:
        raise RuntimeError("a seat does not step by itself: the world steps once every agent chose")

    def close(self) -> None:
        """The world closes its env."""


class World:
    """A PettingZoo ParallelEnv with ``Discrete`` spaces, stepped with every live agent's
    action: the seats, the step limit, the success rule, and greedy evaluation."""

    def __init__(
        self, env: ParallelEnv, env_id: str, kwargs: dict[str, Any], family: Family, max_episode_steps: int | None
    ) -> None:
        self.env = env
        self.env_id = env_id
        self.kwargs = kwargs
        self.family = family
        self.max_episode_steps = max_episode_steps or DEFAULT_MAX_EPISODE_STEPS
        self.agents: list[str] = list(env.possible_agents)
        if not self.agents:
            raise EnvError(f'env "{env_id}": the world has no agents (possible_agents is empty)')
        self.seats: dict[str, Seat] = {}
        for agent in self.agents:
            sizes = []
            for what, space in (("observation", env.observation_space(agent)), ("action", env.action_space(agent))):
                if not isinstance(space, Discrete) or int(space.start) != 0:
                    raise EnvError(
                        f'env "{env_id}": {agent}\'s {what} space {space} is not Discrete from 0; '
                        "bdi-rl's learners are tabular"
                    )
                sizes.append(int(space.n))
            self.seats[agent] = Seat(self, agent, sizes[0], sizes[1])
        optimum = getattr(env, "optimum", None)
        self.optimum: float | None = float(optimum()[0]) if callable(optimum) else None
        """the best common payoff of a matrix game (its success), None for other worlds"""
        self.bound: dict[str, str] = {}
        """each agent's bdi-rl agent, in the world's order (set when the spec binds them)"""
        self.steps = 0
        """steps of the current episode"""
        self._eval_env: ParallelEnv | None = None

    def succeeded(self, last_reward: float) -> bool:
        """A termination is a success: a matrix game's optimum paid, or any other world's
        positive last reward (lbforaging: the food was eaten)."""
        if self.optimum is not None:
            return math.isclose(last_reward, self.optimum)
        return last_reward > 0

    def reset(self, seed: int | None = None) -> dict[str, int]:
        obs, _ = self.env.reset(seed=seed)
        self.steps = 0
        return {agent: int(o) for agent, o in obs.items()}

    def step(self, actions: dict[str, int]) -> JointStep:
        """One step with every live agent's action; an episode that reaches the step limit
        is truncated for every agent still in it."""
        step = joint_step(self.env, {}, {}, actions, learn=False)
        self.steps += 1
        if not step.done and self.steps >= self.max_episode_steps:
            step.truncations = {agent: True for agent in step.obs}
            step.done = True
        return step

    def grid(self) -> dict[str, Any] | None:
        """The world's map when it is a grid (``trace.kinds.WorldData``), else None."""
        grid = getattr(self.env, "grid", None)
        return grid() if callable(grid) else None

    def cells(self) -> dict[str, list[list[int]]] | None:
        """Where the agents (``positions``, world order) and items are now, on a grid world."""
        cells = getattr(self.env, "cells", None)
        return cells() if callable(cells) else None

    @property
    def live(self) -> list[str]:
        """Agents still in the episode (PettingZoo's ``agents``)."""
        return list(self.env.agents)

    def evaluate(
        self, policies: dict[str, list[int]], episodes: int, seed: int, default: int = 0
    ) -> dict[str, EvalResult]:
        """Greedy joint episodes, each agent playing its ``policies`` entry (its greedy action
        per observation; an empty one plays ``default``), on a world of its own (so the training
        world's state and random stream stay as they were): each agent's mean return, the
        share of episodes that succeeded and the mean length. Episode ``k`` is seeded
        ``seed + k``, so every evaluation plays the same starts."""
        if self._eval_env is None:
            self._eval_env = make_world(self.env_id, self.kwargs, self.max_episode_steps).env
        env = self._eval_env
        totals = {agent: 0.0 for agent in policies}
        successes = length = 0
        for k in range(episodes):
            obs_raw, _ = env.reset(seed=seed + k)
            obs = {agent: int(o) for agent, o in obs_raw.items()}
            steps, succeeded = 0, False
            while env.agents and steps < self.max_episode_steps:
                actions = {agent: (policies[agent][s] if policies.get(agent) else default) for agent, s in obs.items()}
                step = joint_step(env, {}, obs, actions, learn=False)
                for agent, r in step.rewards.items():
                    totals[agent] = totals.get(agent, 0.0) + r
                steps += 1
                obs = step.obs
                succeeded = any(t and self.succeeded(step.rewards[a]) for a, t in step.terminations.items())
            successes += int(succeeded)
            length += steps
        n = max(episodes, 1)
        return {
            agent: EvalResult(
                episodes=episodes, mean_return=total / n, success_rate=successes / n, mean_length=length / n
            )
            for agent, total in totals.items()
        }

    def close(self) -> None:
        self.env.close()
        if self._eval_env is not None:
            self._eval_env.close()
