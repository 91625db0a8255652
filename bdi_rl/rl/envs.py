"""Gymnasium adapter: one small, fast interface over tabular (Discrete x Discrete) envs.

The learner only sees integer states and actions, so everything env-specific -- how an
episode ended, where a state sits on a grid, which kwargs define the state space -- is
answered here.  Nothing in this module knows about agents, XMPP or AgentSpeak.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import gymnasium as gym
from gymnasium.spaces import Discrete
from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker, TimeLimit

from bdi_rl.rl.families import (
    TAXI_STATIONS,
    Family,
    family_of_env,
    taxi_decode,
    taxi_encode,
    world_cell,
    world_state,
)

__all__ = [
    "DEFAULT_MAX_EPISODE_STEPS",
    "EnvAdapter",
    "EnvError",
    "TAXI_STATIONS",
    "make_env",
    "taxi_decode",
    "taxi_encode",
    "world_cell",
    "world_state",
]

#: Limit applied when an env has no TimeLimit of its own and none was asked for
#: (CliffWalking-v1 is registered without one): an untrained greedy policy can walk
#: into a wall forever, and every episode must end.
DEFAULT_MAX_EPISODE_STEPS = 1000

# Wrappers that change nothing about the dynamics: the adapter may step the bare env
# beneath them and count the time limit itself (saves two Python calls per step).
_TRANSPARENT_WRAPPERS = (TimeLimit, OrderEnforcing, PassiveEnvChecker)

# Per registered id, the kwargs that decide the state space (for checkpoint
# validation).  A family may tell them itself (FrozenLake: its grid's size);
# ids not listed here record every kwarg, which is strict but never wrong.
_STATE_SPACE_KWARGS: dict[str, tuple[str, ...]] = {
    "Taxi-v4": (),
    "CliffWalking-v1": (),
}


class EnvError(ValueError):
    """A user-facing problem with the configured env (one line, names the env)."""


def _one_line(exc: BaseException) -> str:
    text = " ".join((str(exc).strip() or type(exc).__name__).split())
    return text if len(text) <= 300 else text[:297] + "..."


def _find_time_limit(env: gym.Env[Any, Any]) -> int | None:
    """The max_episode_steps of the first TimeLimit in the wrapper chain, if any."""
    while isinstance(env, gym.Wrapper):
        if isinstance(env, TimeLimit):
            return int(env._max_episode_steps)
        env = env.env
    return None


def _chain_is_transparent(env: gym.Env[Any, Any]) -> bool:
    while isinstance(env, gym.Wrapper):
        if type(env) not in _TRANSPARENT_WRAPPERS:
            return False
        env = env.env
    return True


class EnvAdapter:
    """A Discrete-state, Discrete-action env behind plain ints and floats.

    ``step`` is the training hot path: it calls the env's ``step`` once and returns
    ``(s2, r, terminated, truncated)`` without building anything else.  When the
    wrapper chain only holds bookkeeping wrappers (TimeLimit, OrderEnforcing, env
    checker) it calls the bare env and applies the time limit itself.
    """

    def __init__(
        self,
        env: gym.Env[Any, Any],
        env_id: str,
        kwargs: dict[str, Any] | None = None,
        max_episode_steps: int | None = None,
    ) -> None:
        obs_space, act_space = env.observation_space, env.action_space
        for what, space in (("observation", obs_space), ("action", act_space)):
            if not isinstance(space, Discrete):
                env.close()
                raise EnvError(
                    f'env "{env_id}": {what} space {space} is not Discrete; '
                    "bdi-rl needs Discrete observations and actions"
                )
            if int(space.start) != 0:
                env.close()
                raise EnvError(
                    f'env "{env_id}": {what} space {space} does not start at 0; bdi-rl indexes its Q-table from 0'
                )
        limit = _find_time_limit(env)
        if limit is None:
            limit = max_episode_steps or DEFAULT_MAX_EPISODE_STEPS
            env = TimeLimit(env, limit)
        self.env = env
        self.env_id = env_id
        self.kwargs: dict[str, Any] = dict(kwargs or {})
        self.n_states = int(obs_space.n)  # type: ignore[attr-defined]
        self.n_actions = int(act_space.n)  # type: ignore[attr-defined]
        self.max_episode_steps: int = limit
        base: Any = env.unwrapped  # toy-text attributes (nrow, shape, desc) are untyped
        self.family: Family = family_of_env(base)
        names = self.family.action_names
        self.action_names: list[str] = (
            list(names) if len(names) == self.n_actions else [f"a{a}" for a in range(self.n_actions)]
        )
        self._step: Callable[[int], tuple[Any, Any, Any, Any, Any]] = (
            env.unwrapped.step if _chain_is_transparent(env) else env.step
        )
        self._t = 0
        self._arrivals: dict[int, list[tuple[int, int, float]]] | None = None
        self._shape = self.family.grid_shape(base)
        self.has_state_facts: bool = self.family.has_facts
        """whether a state decodes into percepts (:meth:`facts`; read at every step)"""

    # -- episode -------------------------------------------------------------------

    def reset(self, seed: int | None = None) -> int:
        """Start an episode (through the whole wrapper chain, so wrappers stay in sync)."""
        self._t = 0
        s, _ = self.env.reset(seed=seed)
        return int(s)

    def step(self, a: int) -> tuple[int, float, bool, bool]:
        """One transition: ``(s2, reward, terminated, truncated)``."""
        s2, r, term, trunc, _ = self._step(a)
        self._t = t = self._t + 1
        return int(s2), float(r), term, trunc or t >= self.max_episode_steps

    def outcome(self, r: float, terminated: bool, truncated: bool) -> str | None:
        """How the episode ended, from its last transition; None while it runs.

        "goal" (reached the goal / Taxi drop-off / any termination with r > 0),
        "hole" (FrozenLake termination with r == 0), "timeout" (truncated, not
        terminated), "failed" (any other termination with r <= 0).  CliffWalking only
        terminates at the goal (the cliff sends the agent back to the start).
        """
        if terminated:
            return self.family.terminal_outcome(r)
        if truncated:
            return "timeout"
        return None

    def success(self, outcome: str | None, episode_return: float) -> bool:
        """Whether an episode succeeded, by this env family's one rule."""
        return self.family.is_success(outcome, episode_return)

    # -- geometry --------------------------------------------------------------------

    @property
    def grid_shape(self) -> tuple[int, int] | None:
        """(rows, cols) for grid worlds (FrozenLake, CliffWalking), else None."""
        return self._shape

    def facts(self, s: int) -> dict[str, tuple[int, ...]]:
        """What state ``s`` is made of, as percepts (its family's: ``Family.facts``)."""
        return self.family.facts(s) if self.family.has_facts else {}

    def position(self, s: int) -> tuple[int, int] | None:
        """(x, y) = (col, row) of state ``s`` in a grid world, else None."""
        if self._shape is None:
            return None
        cols = self._shape[1]
        return (s % cols, s // cols)

    def state_at(self, x: int, y: int) -> int | None:
        """The state at grid cell (x, y), or None outside the grid (or in a non-grid env)."""
        if self._shape is None:
            return None
        rows, cols = self._shape
        if not (0 <= x < cols and 0 <= y < rows):
            return None
        return y * cols + x

    def arrivals(self, s2: int) -> list[tuple[int, int, float]]:
        """``(s, a, p)`` for every state-action that lands in ``s2`` with probability ``p > 0``.

        Read from the movement part of the env's transition table (toy-text ``P``), so a
        learner told where a hazard is knows which of its moves risk it; rewards and
        terminal flags of ``P`` are never used. Empty for envs without a table."""
        if self._arrivals is None:
            table: dict[int, list[tuple[int, int, float]]] = {}
            P = getattr(self.env.unwrapped, "P", None)
            if isinstance(P, dict):
                for s, moves in P.items():
                    for a, outcomes in moves.items():
                        landing: dict[int, float] = {}
                        for p, nxt, *_ in outcomes:
                            landing[int(nxt)] = landing.get(int(nxt), 0.0) + float(p)
                        for nxt, p in landing.items():
                            if p > 0 and nxt != s:
                                table.setdefault(nxt, []).append((int(s), int(a), p))
            self._arrivals = table
        return self._arrivals.get(s2, [])

    def world(self) -> dict[str, Any] | None:
        """The map of a grid world as the trace records it in ``agent.start`` (``WorldData``),
        so a reader draws the episode without rebuilding the env; None for other envs.

        ``map`` holds one string per row, a letter per cell: FrozenLake's resolved ``desc``
        (S F H G, custom and generated maps included); CliffWalking's S, C (cliff), G and
        ``.``; Taxi's stations R G Y B and ``.``, with ``walls`` the [row, col] cells that
        have a wall on their east side (Taxi's fixed layout)."""
        return self.family.world(self.env.unwrapped)

    # -- identity --------------------------------------------------------------------

    def state_space_signature(self) -> dict[str, Any]:
        """What a saved Q-table must match to be reused (JSON-serialisable).

        Holds the env id, the sizes, and only the kwargs that shape the state space:
        dynamics kwargs such as ``is_slippery`` are left out so a table can be
        warm-started across them. For FrozenLake that is the grid's size, not its layout:
        a table carries over to a map whose goal (or holes) moved, which is a new task on
        the same states (:meth:`task_signature` records the layout).
        """
        space_kwargs = self.family.state_space_kwargs(self.env.unwrapped)
        if space_kwargs is None and self.env_id in _STATE_SPACE_KWARGS:
            keep = _STATE_SPACE_KWARGS[self.env_id]
            space_kwargs = {k: v for k, v in self.kwargs.items() if k in keep}
        elif space_kwargs is None:
            space_kwargs = {k: v for k, v in sorted(self.kwargs.items()) if k != "render_mode"}
        return {
            "env_id": self.env_id,
            "kwargs": space_kwargs,
            "n_states": self.n_states,
            "n_actions": self.n_actions,
        }

    def task_signature(self) -> dict[str, Any]:
        """What the task looks like on those states: FrozenLake's map rows (start, holes,
        goal), else nothing. A warm start across a different task is allowed and noted."""
        return self.family.task_signature(self.env.unwrapped)

    def close(self) -> None:
        self.env.close()

    def __repr__(self) -> str:
        return (
            f"EnvAdapter({self.env_id!r}, n_states={self.n_states}, "
            f"n_actions={self.n_actions}, max_episode_steps={self.max_episode_steps})"
        )


def _load_entry_point(env_id: str) -> Callable[..., Any] | None:
    """Resolve ``module:Attr``; None means "module imported, Attr is a registered id"."""
    module_name, _, attr = env_id.partition(":")
    if not module_name or not attr:
        raise EnvError(f'env "{env_id}": entry point must look like "module:Class"')
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise EnvError(f'env "{env_id}": cannot import module "{module_name}": {_one_line(exc)}') from exc
    target: object = getattr(module, attr, None)
    if target is None:
        if attr in gym.registry:  # gymnasium's own "module:EnvId-v0" convention
            return None
        raise EnvError(f'env "{env_id}": module "{module_name}" has no attribute "{attr}"')
    if not callable(target):
        raise EnvError(f'env "{env_id}": "{attr}" is not a class or factory')
    return target


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def make_env(
    env_id: str,
    kwargs: dict[str, Any] | None = None,
    max_episode_steps: int | None = None,
) -> EnvAdapter:
    """Build an :class:`EnvAdapter` from a registered id or a ``module:Class`` entry point.

    ``max_episode_steps`` overrides the registered limit; an env without any limit gets
    :data:`DEFAULT_MAX_EPISODE_STEPS`.  Every failure is an :class:`EnvError`.
    """
    kw = dict(kwargs or {})
    if max_episode_steps is not None and max_episode_steps <= 0:
        raise EnvError(f'env "{env_id}": max_episode_steps must be > 0, got {max_episode_steps}')
    factory = _load_entry_point(env_id) if ":" in env_id else None
    try:
        if factory is None:
            make_id = env_id.partition(":")[2] or env_id
            try:
                env = gym.make(make_id, max_episode_steps=max_episode_steps, disable_env_checker=True, **kw)
            except gym.error.Error as exc:
                raise EnvError(f'env "{env_id}": no such registered environment ({_one_line(exc)})') from exc
        else:
            env = factory(**kw)
            if not isinstance(env, gym.Env):
                raise EnvError(f'env "{env_id}": the entry point returned {type(env).__name__}, not a gymnasium.Env')
            if max_episode_steps is not None:
                env = TimeLimit(env, max_episode_steps)
    except EnvError:
        raise
    except Exception as exc:
        raise EnvError(f'env "{env_id}": cannot be made with kwargs {_short(kw)}: {_one_line(exc)}') from exc
    try:
        return EnvAdapter(env, env_id, kw, max_episode_steps)
    except EnvError:
        raise
    except Exception as exc:
        raise EnvError(f'env "{env_id}" with kwargs {_short(kw)} does not work: {_one_line(exc)}') from exc


def probe_reset(env_id: str, kwargs: dict[str, Any], reset: Callable[[], object]) -> None:
    """Reset a new env once, so that what only fails then (``render_mode="human"`` without
    pygame, a map an env checks lazily) is an EnvError before a run creates anything, not a
    failed first episode (a run's checks call it: ``xmpp.runner``). Training reseeds its
    first reset, so this one changes nothing."""
    try:
        reset()
    except Exception as exc:
        if "render_mode" in kwargs:  # the kwarg that works only where a screen or pygame is
            where = f"env.kwargs.render_mode: {kwargs['render_mode']!r}"
        else:
            where = f'env "{env_id}" with kwargs {_short(kwargs)}'
        raise EnvError(f"{where} fails at the env's first reset: {_one_line(exc)}") from exc
