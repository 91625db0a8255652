"""Warm starts through the CLI, as a user runs them: from a run directory or one file, the
table is checked against the env first, the plans know (``warm_started``), and a bad or
mismatched checkpoint stops the run before anything is written."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from bdi_rl.rl.checkpoint import load_checkpoint
from bdi_rl.trace.reading import read_trace
from tests.conftest import run_cli

# Deterministic 4x4: a few hundred episodes solve it, one episode does not.
SPEC = """
name = "{name}"
episodes = {episodes}
eval_episodes = 20
seed = 5
checkpoint_every = {every}
trace = "step"

[env]
id = "FrozenLake-v1"
kwargs = {{ map_name = "{map}", is_slippery = false }}

[learning]
epsilon_decay_episodes = 150

[[agents]]
name = "learner"
{extra}
"""


def _spec(tmp_path: Path, name: str, episodes: int, every: int = 0, map_name: str = "4x4", extra: str = "") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(SPEC.format(name=name, episodes=episodes, every=every, map=map_name, extra=extra))
    return path


def _run(tmp_path: Path, spec: Path, *args: str):
    result = run_cli("run", str(spec), "--runs", str(tmp_path / "runs"), "--no-progress", *args)
    return result


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A run that solved the deterministic 4x4, checkpointing every 50 episodes."""
    tmp_path = tmp_path_factory.mktemp("warm")
    result = _run(tmp_path, _spec(tmp_path, "cold", 300, every=50))
    assert result.returncode == 0, result.stderr
    run_dir = Path(result.stdout.strip().splitlines()[-1])
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["agents"]["learner"]["eval"]["success_rate"] == 1.0
    return run_dir


def test_checkpoints_every_n_episodes_and_at_the_end(trained):
    saves = [e["data"]["episodes"] for e in read_trace(trained / "trace.jsonl") if e["kind"] == "qtable.save"]
    assert saves[:6] == [50, 100, 150, 200, 250, 300] and saves[-1] == 300
    meta = load_checkpoint(trained / "qtables" / "learner.npz").meta
    assert meta["episodes"] == 300 and meta["run"] == trained.name and meta["warm_start"] is None
    assert meta["spec_hash"].startswith("sha256:") and meta["env_kwargs"]["is_slippery"] is False


def test_warm_start_from_a_run_directory_is_solved_at_once(trained, tmp_path):
    one = _spec(tmp_path, "warm", 1)
    cold = _run(tmp_path, one)
    assert cold.returncode == 0, cold.stderr
    cold_dir = Path(cold.stdout.strip().splitlines()[-1])
    assert json.loads((cold_dir / "summary.json").read_text())["agents"]["learner"]["eval"]["success_rate"] < 1.0

    warm = _run(tmp_path, one, "--warm-start", str(trained))
    assert warm.returncode == 0, warm.stderr
    run_dir = Path(warm.stdout.strip().splitlines()[-1])
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["agents"]["learner"]["eval"]["success_rate"] == 1.0  # after one episode
    events = read_trace(run_dir / "trace.jsonl")
    load = next(e for e in events if e["kind"] == "qtable.load")
    assert load["data"]["path"] == str(trained / "qtables" / "learner.npz") and load["data"]["episodes"] == 300
    assert load["data"]["epsilon"] == 0.05  # restarts low: the group's epsilon_end
    assert any(e["kind"] == "belief.add" and e["data"]["belief"] == "warm_started(300)" for e in events)
    meta = load_checkpoint(run_dir / "qtables" / "learner.npz").meta
    assert meta["warm_start"]["path"] == load["data"]["path"] and meta["total_episodes"] == 301
    # its curves go on from the 300 episodes behind its table, not from episode 0
    from bdi_rl.readers.curves import run_series
    from bdi_rl.readers.indexcache import open_index

    (series,) = run_series(open_index(run_dir, None)).agents
    assert list(series.episode_x["episodes"]) == [301] and list(series.eval_x["episodes"]) == [301]


def test_warm_start_from_one_file_in_the_spec(trained, tmp_path):
    source = trained / "qtables" / "learner.npz"
    spec = _spec(tmp_path, "warm-file", 1, extra=f'warm_start = "{source}"\nwarm_epsilon = 0.2')
    result = _run(tmp_path, spec)
    assert result.returncode == 0, result.stderr
    run_dir = Path(result.stdout.strip().splitlines()[-1])
    load = next(e for e in read_trace(run_dir / "trace.jsonl") if e["kind"] == "qtable.load")
    assert load["data"]["epsilon"] == 0.2


def _fingerprint(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("case", ["other-map", "corrupt", "truncated", "missing-agent", "no-such-path"])
def test_a_bad_warm_start_stops_before_anything_is_written(trained, tmp_path, case):
    source = tmp_path / "source"
    source.mkdir()
    table = source / "learner.npz"
    table.write_bytes((trained / "qtables" / "learner.npz").read_bytes())
    spec, expected = _spec(tmp_path, "bad", 5), ""
    if case == "other-map":
        spec = _spec(tmp_path, "bad", 5, map_name="8x8")
        expected = "made for another state space than this run's env (checkpoint vs run: table 16x4 vs 64x4"
    elif case == "corrupt":
        data = bytearray(table.read_bytes())
        data[len(data) // 3] ^= 0xFF
        table.write_bytes(bytes(data))
        expected = "learner.npz: "
    elif case == "truncated":
        table.write_bytes(table.read_bytes()[:300])
        expected = "not a readable checkpoint"
    elif case == "missing-agent":
        table.rename(source / "someone-else.npz")
        expected = "no checkpoint for learner (has: someone-else)"
    else:
        source = tmp_path / "nowhere"
        expected = "--warm-start " + str(source) + ": no such run directory or checkpoint file"
    before = _fingerprint(tmp_path / "source")
    result = _run(tmp_path, spec, "--warm-start", str(source))
    assert result.returncode == 2, result.stdout
    assert expected in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "runs").exists()  # no run directory was created
    assert _fingerprint(tmp_path / "source") == before  # and the source is untouched


@pytest.mark.slow  # runs the CLI on a trained table, several times
def test_qtable_show_and_diff(trained, tmp_path):
    table = trained / "qtables" / "learner.npz"
    shown = run_cli("qtable", "show", str(table))
    assert shown.returncode == 0, shown.stderr
    assert "FrozenLake-v1" in shown.stdout and "16 states x 4 actions" in shown.stdout
    assert "(verified)" in shown.stdout and "300 episodes" in shown.stdout
    # The greedy policy drawn on the map leads from S to G without stepping into a hole.
    lines = shown.stdout.splitlines()
    top = lines.index(next(line for line in lines if line.startswith("greedy policy"))) + 1
    cells = [[line[2 + 3 * x : 4 + 3 * x] for x in range(4)] for line in lines[top : top + 4]]
    moves = {"←": (-1, 0), "→": (1, 0), "↑": (0, -1), "↓": (0, 1)}
    x = y = 0
    for _ in range(16):
        letter, arrow = cells[y][x]
        if letter == "G":
            break
        assert letter in "SF", cells
        x, y = x + moves[arrow][0], y + moves[arrow][1]
    assert cells[y][x][0] == "G", cells

    warm = _run(tmp_path, _spec(tmp_path, "more", 30), "--warm-start", str(trained))
    more = Path(warm.stdout.strip().splitlines()[-1]) / "qtables" / "learner.npz"
    compared = run_cli("qtable", "diff", str(table), str(more))
    assert compared.returncode == 0, compared.stderr
    assert "max |B - A|" in compared.stdout and "states change their greedy action" in compared.stdout

    eight = _run(tmp_path, _spec(tmp_path, "eight", 2, map_name="8x8"))
    other = Path(eight.stdout.strip().splitlines()[-1]) / "qtables" / "learner.npz"
    refused = run_cli("qtable", "diff", str(table), str(other))
    assert refused.returncode == 2 and "B vs A: table 64x4 vs 16x4" in refused.stderr
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"nope")
    bad = run_cli("qtable", "show", str(garbage))
    assert bad.returncode == 2 and "not a readable checkpoint" in bad.stderr


def test_a_warm_learner_goes_on_with_the_learning_rate_it_had(tmp_path):
    """A converged table must not be hit with the schedule's first, high alpha: on FrozenLake
    8x8 that kept a warm learner solved after only 282-334 of its first 500 episodes, against
    500 of 500 when alpha goes on from the checkpoint's (BENCHMARKS.md)."""
    import numpy as np

    from bdi_rl.rl.checkpoint import save_checkpoint
    from bdi_rl.rl.envs import make_env
    from bdi_rl.spec import load_spec
    from bdi_rl.xmpp.setup import learner_setups

    env = make_env("FrozenLake-v1", {"map_name": "4x4", "is_slippery": False})
    source = tmp_path / "learner.npz"
    save_checkpoint(source, np.ones((16, 4)), {"env": env.state_space_signature(), "episodes": 900, "alpha": 0.01})
    spec_path = _spec(
        tmp_path,
        "alpha",
        10,
        extra=f'warm_start = "{source}"\nlearning = {{ alpha = 0.2, alpha_min = 0.005, alpha_decay = 0.999 }}',
    )
    (plan,) = learner_setups(load_spec(spec_path))
    assert plan.learner.alpha == 0.01 and plan.learner.config.alpha_min == 0.005
    assert plan.learner.epsilon == 0.05 and np.all(plan.learner.q == 1.0)
    cold = learner_setups(load_spec(_spec(tmp_path, "cold-alpha", 10)))[0]
    assert cold.learner.alpha == 0.1  # without a warm start: the spec's own schedule
