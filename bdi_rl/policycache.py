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

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bdi_rl.envs import EnvAdapter
from bdi_rl.store import atomic_write_json

FORMAT = 1
POLICY_DIR = "policies"


class PolicyFileError(ValueError):
    """A policy cache file that cannot be used (one line, naming the file)."""


@dataclass(frozen=True)
class CachedPolicy:
    goal: tuple[int, int]
    actions: str
    """comma-separated action numbers, "1,1,2,2,1,2\""""
    confidence: float


def encode(actions: list[int]) -> str:
    return ",".join(str(a) for a in actions)


def decode(text: str, n_actions: int) -> list[int]:
    """The action numbers of a sequence; ValueError for anything else."""
    try:
        actions = [int(part) for part in text.split(",")] if text else []
    except ValueError:
        raise ValueError(f"not an action sequence: {text[:40]!r}") from None
    if any(not 0 <= a < n_actions for a in actions):
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


def policy_file(run_dir: Path, agent: str) -> Path:
    return run_dir / POLICY_DIR / f"{agent}.json"


def save_policies(path: Path, agent: str, env: EnvAdapter, policies: dict[tuple[int, int], CachedPolicy]) -> None:
    atomic_write_json(path, {
        "format": FORMAT, "agent": agent, "env": env.state_space_signature(),
        "policies": [{"goal": list(p.goal), "actions": p.actions, "confidence": p.confidence}
                     for p in policies.values()]})


def load_policies(path: Path, env: EnvAdapter) -> dict[tuple[int, int], CachedPolicy]:
    """A policy cache file, checked against ``env`` (PolicyFileError otherwise)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PolicyFileError(f"{path}: not a readable policy cache ({type(exc).__name__})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PolicyFileError(f"{path}: not a policy cache of format {FORMAT}")
    mine = env.state_space_signature()
    if data.get("env") != mine:
        raise PolicyFileError(f"{path}: made for {data.get('env')}, not {mine}")
    policies: dict[tuple[int, int], CachedPolicy] = {}
    try:
        for entry in data["policies"]:
            goal = (int(entry["goal"][0]), int(entry["goal"][1]))
            decode(entry["actions"], env.n_actions)
            policies[goal] = CachedPolicy(goal, str(entry["actions"]), float(entry["confidence"]))
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise PolicyFileError(f"{path}: malformed entry ({exc})") from None
    return policies


def as_beliefs(policies: dict[tuple[int, int], CachedPolicy]) -> list[Any]:
    """``has_policy(X, Y, Actions, Confidence)`` literals for a mind's first beliefs."""
    import agentspeak as asp

    return [asp.Literal("has_policy", (p.goal[0], p.goal[1], p.actions, round(p.confidence, 6)))
            for p in policies.values()]
