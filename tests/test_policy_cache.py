"""The policy cache (asl/goal-learner.asl): a cached sequence is tried first, fails on a map
where it walks into a hole, is dropped, and a new one is learned and cached; and goals that
move (env.goals) are perceived before each episode's plan is chosen."""

from __future__ import annotations

import json
from pathlib import Path

from bdi_rl.bdi.policycache import confidence, decode, greedy_sequence
from bdi_rl.rl.envs import make_env
from bdi_rl.trace.reading import read_trace
from tests.conftest import run_cli

SPEC = """
name = "{name}"
episodes = {episodes}
eval_episodes = 20
seed = 1
trace = "step"

[env]
id = "FrozenLake-v1"
kwargs = {{ desc = {desc}, is_slippery = false }}
{goals}

[learning]
epsilon_decay_episodes = {decay}

[[agents]]
name = "learner"
asl = "goal-learner.asl"
mode = "episode"
{extra}
"""
OPEN = '["SFFF", "FHFH", "FFFH", "HFFG"]'
BLOCKED = '["SFFF", "FHFH", "FFFH", "HHFG"]'  # a hole at (1, 3), on the open map's shortest way


def _run(
    tmp_path: Path, name: str, episodes: int, desc: str, goals: str = "", extra: str = "", decay: int = 80
) -> Path:
    spec = tmp_path / f"{name}.toml"
    spec.write_text(SPEC.format(name=name, episodes=episodes, desc=desc, goals=goals, extra=extra, decay=decay))
    result = run_cli("run", str(spec), "--runs", str(tmp_path / "runs"), "--no-progress")
    assert result.returncode == 0, result.stderr
    return Path(result.stdout.strip().splitlines()[-1])


def _events(run_dir: Path) -> list[dict]:
    """The run's events, step records expanded (format 2)."""
    return read_trace(run_dir / "trace.jsonl")


def _beliefs(events: list[dict], kind: str, prefix: str) -> list[tuple[int, str]]:
    return [
        (e["episode"], e["data"]["belief"])
        for e in events
        if e["kind"] == kind and e["data"]["belief"].startswith(prefix)
    ]


def test_cached_policy_is_used_fails_on_a_hole_and_is_repaired(tmp_path):
    first = _run(tmp_path, "open", 120, OPEN)
    cached = json.loads((first / "policies" / "learner.json").read_text())["policies"]
    assert [p["goal"] for p in cached] == [[3, 3]] and cached[0]["confidence"] == 1.0
    old_way = cached[0]["actions"]

    second = _run(tmp_path, "blocked", 400, BLOCKED, extra=f'warm_start = "{first}"')
    events = _events(second)
    load = next(e for e in events if e["kind"] == "qtable.load")
    assert "(1,3) F->H" in load["data"]["task_change"]
    assert (0, f'has_policy(3, 3, "{old_way}", 1)') in _beliefs(events, "belief.add", "has_policy")
    follows = [e for e in events if e["kind"] == "action" and e["data"]["name"] == ".rl_follow"]
    assert follows and follows[0]["episode"] == 0  # the cached way is tried first
    first_end = next(e for e in events if e["kind"] == "episode.end")
    assert first_end["data"]["outcome"] == "hole"  # ... and walks into the new hole
    assert (0, f'has_policy(3, 3, "{old_way}", 1)') in _beliefs(events, "belief.del", "has_policy")
    assert _beliefs(events, "belief.add", "cached_policy_failed") == [(0, "cached_policy_failed(3, 3)")]
    # Repaired: learning found another way, which is cached and then used.
    new = [b for _, b in _beliefs(events, "belief.add", "has_policy")[1:]]
    assert new and old_way not in new[0]
    new_way = json.loads((second / "policies" / "learner.json").read_text())["policies"][0]["actions"]
    assert new_way != old_way and f'"{new_way}"' in new[0]
    blocked = make_env("FrozenLake-v1", {"desc": json.loads(BLOCKED), "is_slippery": False})
    assert confidence(blocked, decode(new_way, 4)) == 1.0 and confidence(blocked, decode(old_way, 4)) == 0.0
    assert sum(1 for e in follows if e["episode"] > 0) > 10  # the repaired cache is used
    summary = json.loads((second / "summary.json").read_text())
    assert summary["agents"]["learner"]["eval"]["success_rate"] == 1.0


def test_a_goal_that_moves_away_and_back_gets_its_cached_policy_back(tmp_path):
    """The goal moves every 120 episodes: (3,3), then (2,0), then (3,3) again. Each episode's
    goal is perceived before its plan is chosen, so a cached policy is only ever played for
    its own goal (none fails), and the return to (3,3) is solved from its first episode."""
    run_dir = _run(tmp_path, "moving", 360, OPEN, goals="goals = [[3, 3], [2, 0]]\ngoal_every = 120", decay=60)
    events = _events(run_dir)
    ends = [e for e in events if e["kind"] == "episode.end"]
    assert [e["data"]["goal"] for e in ends] == [[3, 3]] * 120 + [[2, 0]] * 120 + [[3, 3]] * 120
    cached = _beliefs(events, "belief.add", "has_policy(3, 3,")
    assert cached and cached[0][0] < 120  # learned and cached in the first phase
    assert not _beliefs(events, "belief.add", "cached_policy_failed")
    follows = {e["episode"] for e in events if e["kind"] == "action" and e["data"]["name"] == ".rl_follow"}
    assert set(range(240, 360)) <= follows  # back at (3,3): the cached way, every episode
    assert all(e["data"]["outcome"] == "goal" and e["data"]["length"] == 6 for e in ends[240:])


def test_greedy_sequence_and_its_confidence():
    import numpy as np

    env = make_env("FrozenLake-v1", {"map_name": "4x4", "is_slippery": False})
    q = np.zeros((16, 4))
    for s, a in [(0, 1), (4, 1), (8, 2), (9, 1), (13, 2), (14, 2)]:
        q[s, a] = 1.0
    actions = greedy_sequence(env, q)
    assert actions == [1, 1, 2, 1, 2, 2] and confidence(env, actions) == 1.0
    assert confidence(env, actions[:-1]) == 0.0  # one move short of the goal
    slippery = make_env("FrozenLake-v1", {"map_name": "4x4", "is_slippery": True})
    assert 0 < confidence(slippery, actions) < 0.1  # blind moves on ice rarely arrive
