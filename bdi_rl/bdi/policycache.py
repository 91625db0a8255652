"""The policy cache: greedy action sequences that reached a goal, kept per goal cell.

After a success a learner can propose its greedy action sequence from the start, with a
confidence: the exact probability that playing the sequence blindly reaches the goal,
computed on the env's transition table (toy-text ``P``; envs without one get 0, so nothing is
cached there). Plans cache a sequence above a threshold, try it first on the next episode
for that goal, and drop it when it fails (``asl/goal-learner.asl``). The cache is the plans'
beliefs; this module does the arithmetic and keeps a copy in the run directory
(``policies/<agent>.json``, written atomically) so a warm start can bring it along.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bdi_rl.bdi.args import cell_arg, decoded, number_arg, text_arg
from bdi_rl.bdi.episode import EpisodeSession
from bdi_rl.bdi.runtime.terms import Struct
from bdi_rl.rl.envs import EnvAdapter
from bdi_rl.rl.policyfile import (
    FORMAT,
    POLICY_DIR,
    PolicyEntry,
    PolicyFile,
    PolicyFileError,
    policy_file,
    read_policy_file,
)
from bdi_rl.store import atomic_write_json

__all__ = [
    "FORMAT",
    "POLICY_DIR",
    "CachedPolicy",
    "PolicyCache",
    "PolicyEntry",
    "PolicyFile",
    "PolicyFileError",
    "as_beliefs",
    "load_policies",
    "policy_file",
    "save_policies",
]


@dataclass(frozen=True)
class CachedPolicy:
    goal: tuple[int, int]
    actions: str
    """comma-separated action numbers, "1,1,2,2,1,2\""""
    confidence: float


def encode(actions: list[int]) -> str:
    return ",".join(str(a) for a in actions)


#: Comma-separated action numbers in plain decimal: what :func:`encode` writes (``int()``
#: would also take " 1", "+1", "1_0" and other scripts' digits).
_SEQUENCE = re.compile(r"[0-9]{1,9}(?:,[0-9]{1,9})*")


def decode(text: Any, n_actions: int) -> list[int]:
    """The action numbers of a sequence (a plan's, a file's: checked whole); ValueError
    for anything else."""
    if not isinstance(text, str):
        raise ValueError(f"not an action sequence: {type(text).__name__} {str(text)[:40]!r}")
    if text and not _SEQUENCE.fullmatch(text):
        raise ValueError(f"not an action sequence: {text[:40]!r}")
    actions = [int(part) for part in text.split(",")] if text else []
    if any(a >= n_actions for a in actions):
        raise ValueError(f"action out of range 0..{n_actions - 1} in {text[:40]!r}")
    return actions


def _table(env: EnvAdapter) -> dict[int, dict[int, list[tuple[float, int, float, bool]]]] | None:
    table = getattr(env.env.unwrapped, "P", None)
    return table if isinstance(table, dict) else None


def _start(env: EnvAdapter) -> np.ndarray | None:
    start = getattr(env.env.unwrapped, "initial_state_distrib", None)
    return None if start is None else np.asarray(start, dtype=np.float64)


def greedy_sequence(env: EnvAdapter, q: np.ndarray) -> list[int]:
    """The greedy actions from the most likely start, following the most likely outcome of
    each move, until a terminal state or the step limit (empty without a table)."""
    table, start = _table(env), _start(env)
    if table is None or start is None:
        return []
    s = int(np.argmax(start))
    actions: list[int] = []
    for _ in range(env.max_episode_steps):
        a = int(np.argmax(q[s]))
        actions.append(a)
        p, s2, _, done = max(table[s][a], key=lambda outcome: outcome[0])
        if done:
            break
        s = int(s2)
    return actions


def confidence(env: EnvAdapter, actions: list[int]) -> float:
    """Exact probability that playing ``actions`` blindly ends in a rewarded termination."""
    table, start = _table(env), _start(env)
    if table is None or start is None or not actions:
        return 0.0
    alive = start.copy()
    reached = 0.0
    for a in actions:
        nxt = np.zeros_like(alive)
        for s in np.flatnonzero(alive):
            for p, s2, r, done in table[int(s)][a]:
                mass = alive[s] * p
                if done:
                    reached += mass if r > 0 else 0.0
                else:
                    nxt[int(s2)] += mass
        alive = nxt
    return float(reached)


def save_policies(path: Path, agent: str, env: EnvAdapter, policies: dict[tuple[int, int], CachedPolicy]) -> None:
    atomic_write_json(
        path,
        {
            "format": FORMAT,
            "agent": agent,
            "env": env.state_space_signature(),
            "policies": [
                {"goal": list(p.goal), "actions": p.actions, "confidence": p.confidence} for p in policies.values()
            ],
        },
    )


def load_policies(path: Path, env: EnvAdapter) -> dict[tuple[int, int], CachedPolicy]:
    """A policy cache file, checked against ``env`` (PolicyFileError otherwise)."""
    data = read_policy_file(path)
    mine = env.state_space_signature()
    if data.env != mine:
        raise PolicyFileError(f"{path}: made for {str(data.env)[:200]}, not {mine}")
    policies: dict[tuple[int, int], CachedPolicy] = {}
    for entry in data.policies:
        goal = (entry.goal[0], entry.goal[1])
        try:
            if env.grid_shape is not None and env.state_at(*goal) is None:
                raise ValueError(f"goal {goal} is not a cell of the grid")
            decode(entry.actions, env.n_actions)
        except ValueError as exc:
            raise PolicyFileError(f"{path}: malformed entry ({exc})") from None
        policies[goal] = CachedPolicy(goal, entry.actions, entry.confidence)
    return policies


def as_beliefs(policies: dict[tuple[int, int], CachedPolicy]) -> list[Struct]:
    """``has_policy(X, Y, Actions, Confidence)`` literals for a mind's first beliefs."""
    return [Struct("has_policy", (p.goal[0], p.goal[1], p.actions, round(p.confidence, 6))) for p in policies.values()]


class PolicyCache:
    """The policy cache's internal actions: the plans hold the cache as ``has_policy``
    beliefs; this keeps the run's copy (``policies/<agent>.json``) and does the arithmetic."""

    def __init__(
        self,
        session: EpisodeSession,
        policies: dict[tuple[int, int], CachedPolicy] | None,
        path: Path | None,
        agent: str,
    ) -> None:
        self.session = session
        self.policies = dict(policies or {})
        """a copy of the plans' has_policy beliefs, by goal cell"""
        self.path = path
        """where the copy is written (None: not kept)"""
        self.agent = agent

    def greedy_plan(self) -> str:
        return encode(greedy_sequence(self.session.env, self.session.learner.q))

    def _sequence_arg(self, value: Any, action: str) -> list[int]:
        """An action sequence (``"1,1,2"``) whose every action is in the env's range."""
        return decoded(action, decode, text_arg(value, "the action sequence", action), self.session.env.n_actions)

    def plan_confidence(self, actions: Any) -> float:
        return round(confidence(self.session.env, self._sequence_arg(actions, ".rl_plan_confidence")), 6)

    def follow(self, actions: Any) -> None:
        """A training episode that plays a cached sequence (learning from its transitions);
        a sequence that runs out before the episode ends is a failure."""
        sequence = self._sequence_arg(actions, ".rl_follow")
        session = self.session
        session.reset()
        for a in sequence:
            session.act(a)
            if session.outcome is not None:
                break
        if session.outcome is None:
            session.end_with("failed")
        session.end_episode()

    def cache_policy(self, x: Any, y: Any, actions: Any, conf: Any) -> None:
        action = ".rl_cache_policy"
        cell = cell_arg(self.session.env, x, y, action)
        sequence = self._sequence_arg(actions, action)
        self.policies[cell] = CachedPolicy(cell, encode(sequence), number_arg(conf, "the confidence", action, 0, 1))
        self._save()

    def drop_policy(self, x: Any, y: Any) -> None:
        self.policies.pop(cell_arg(self.session.env, x, y, ".rl_drop_policy"), None)
        self._save()

    def _save(self) -> None:
        if self.path is not None:
            save_policies(self.path, self.agent, self.session.env, self.policies)
