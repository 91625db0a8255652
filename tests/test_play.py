"""``bdi-rl play``: greedy episodes of a trained table as an evaluation run, as a user runs it.

The fast tests play policy-only (no XMPP) through the CLI's ``main`` on a run written by
tests/fakeruns.py; the slow one trains with the real ``bdi-rl run`` and plays through the
agent's plans over the embedded XMPP server."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import numpy as np
import pytest

from bdi_rl.rl.envs import make_env
from bdi_rl.rl.evalstats import bootstrap_mean_interval, evaluation_summary, wilson_interval
from bdi_rl.rl.qlearning import FrozenLearner, LearningConfig, StepColumns, run_episode
from bdi_rl.trace.reading import read_trace
from tests.checkpoints import BAD_CHECKPOINTS, TRAINED_SPEC, fingerprint, trained_run
from tests.conftest import run_cli, run_main


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A finished run whose learner solved the deterministic 4x4 map (300 episodes)."""
    return trained_run(tmp_path_factory.mktemp("play") / "runs")


def _play(source: Path, runs: Path, *args: str):
    return run_main("play", str(source), "--runs", str(runs), "--no-progress", *args)


def _played(result) -> Path:
    assert result.returncode == 0, result.stderr
    return Path(result.stdout.strip().splitlines()[-1])


def _evaluation(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text())["evaluation"]


# -- the parts ------------------------------------------------------------------------------
def test_a_frozen_learner_changes_no_q_value():
    q = np.arange(64, dtype=np.float64).reshape(16, 4) / 64
    learner = FrozenLearner(q, LearningConfig(alpha=0.5, beta=0.1), seed=1)
    before = learner.q.copy()
    assert learner.epsilon == 0.0 and learner.update(0, 1, 1.0, 4, False) == (before[0, 1], before[0, 1])
    learner.cap([(0, 0, 1.0)])
    learner.floor([(0, 0, 1.0)], 99.0)
    assert learner.adopt_policy([0] * 16) == 0
    learner.set_epsilon(1.0)
    learner.end_episode()
    env = make_env("FrozenLake-v1", {"map_name": "4x4", "is_slippery": True})
    columns = StepColumns()
    result = run_episode(env, learner, learn=False, seed=3, collect=columns)
    assert np.array_equal(learner.q, before) and learner.epsilon == 0.0 and learner.episodes == 1
    assert len(columns.s) == result.length
    assert columns.q_after == [before[s, a] for s, a in zip(columns.s, columns.a, strict=False)]
    assert all(learner.act(s) == int(np.argmax(before[s])) for s in range(16))  # greedy (no ties in this table)


def test_the_intervals():
    assert wilson_interval(740, 1000) == pytest.approx((0.7119, 0.7662), abs=1e-4)
    low, high = wilson_interval(1000, 1000)
    assert high == 1.0 and 0.996 < low < 1.0  # never [1, 1]: 1000 successes do not prove 1.0
    returns = [0.0, 1.0] * 500
    assert bootstrap_mean_interval(returns) == bootstrap_mean_interval(returns)  # a fixed seed
    low, high = bootstrap_mean_interval(returns)
    assert low < 0.5 < high and high - low == pytest.approx(0.062, abs=0.01)
    summary = evaluation_summary(returns, [r > 0 for r in returns], [6] * 1000)
    assert summary["success_rate"] == 0.5 and summary["success_ci95"][0] < 0.5 < summary["success_ci95"][1]


# -- plays through the CLI -------------------------------------------------------------------
def test_1000_greedy_episodes_on_the_same_map_and_on_a_moved_goal(trained, tmp_path):
    before = fingerprint(trained)
    out = tmp_path / "out"
    same = _played(_play(trained, out, "--policy-only", "--episodes", "1000"))
    result = _evaluation(same)
    entry = result["agents"]["learner"]
    assert result["policy_only"] is True
    assert result["success_ci"] == "Wilson score interval" and result["return_ci"].startswith("percentile bootstrap")
    assert (entry["episodes"], entry["success_rate"], entry["mean_return"]) == (1000, 1.0, 1.0)
    assert 0.99 < entry["success_ci95"][0] and entry["success_ci95"][1] == 1.0
    assert entry["checkpoint"]["path"] == str((trained / "qtables" / "learner.npz").resolve())
    assert entry["checkpoint"]["episodes"] == 300 and entry["checkpoint"]["checksum"].startswith("sha256:")
    spec = (same / "spec.toml").read_text()
    assert "[play]\npolicy_only = true" in spec and "warm_start = " in spec
    summary = json.loads((same / "summary.json").read_text())
    assert summary["agents"]["learner"]["eval"]["episodes"] == 1000 and summary["agents"]["learner"]["qtable"] is None
    assert list((same / "qtables").iterdir()) == []  # a play writes no checkpoint

    moved = _played(_play(trained, out, "--policy-only", "--episodes", "1000", "--goal", "3,0"))
    entry = _evaluation(moved)["agents"]["learner"]
    assert entry["success_rate"] == 0.0 and entry["success_ci95"][0] == 0.0 and 0 < entry["success_ci95"][1] < 0.01
    assert entry["task_change"] == "map cells changed: (3,0) F->G, (3,3) G->F"

    slippery = _played(_play(trained, out, "--policy-only", "--episodes", "1000", "--env", "is_slippery=true"))
    entry = _evaluation(slippery)["agents"]["learner"]
    low, high = entry["success_ci95"]
    assert 0 < low < entry["success_rate"] < high < 1
    assert entry["return_ci95"][0] <= entry["mean_return"] <= entry["return_ci95"][1]
    assert fingerprint(trained) == before  # playing changed nothing of the played run


def test_the_summary_line_names_the_intervals(trained, tmp_path):
    result = _play(trained, tmp_path / "out", "--policy-only", "--episodes", "50")
    line = next(x for x in result.stdout.splitlines() if x.startswith("learner: evaluation of"))
    assert "50 greedy episodes, success 1.000 [0.929, 1.000]" in line and "Wilson score interval" in line


def test_the_played_episodes_are_read_by_the_readers(trained, tmp_path):
    """The trace of a play is an ordinary run's: export, inspect, render and the world view."""
    played = _played(_play(trained, tmp_path / "out", "--policy-only", "--episodes", "20"))
    exported = run_main("export", str(played), "--csv", str(tmp_path / "play.csv"))
    assert exported.returncode == 0, exported.stderr
    rows = (tmp_path / "play.csv").read_text().splitlines()[1:]
    assert sum(",episode," in row for row in rows) == 20 and sum(",eval," in row for row in rows) == 1
    video = run_main("render", str(played), "--agent", "learner", "--episode", "7", "-o", str(tmp_path / "e.gif"))
    assert video.returncode == 0 and "7 frames" in video.stdout  # S to G in 6 moves: 7 frames
    mind = run_main("inspect", str(played), "--agent", "learner", "--episode", "3", "--step", "2")
    assert mind.returncode == 0 and '"epsilon": 0.0' in mind.stdout
    kinds = {e["kind"] for e in read_trace(played / "trace.jsonl")}
    assert {
        "run.start",
        "agent.start",
        "qtable.load",
        "rl.step",
        "episode.end",
        "eval",
        "agent.stop",
        "run.stop",
    } <= kinds


def _warm_start_line(trained: Path, tmp_path: Path, map_name: str) -> str:
    """What ``bdi-rl run --warm-start`` says of the trained table on a run of ``map_name``."""
    spec = tmp_path / f"on-{map_name}.toml"
    spec.write_text(TRAINED_SPEC.format(name="other", episodes=5, map=map_name, agent="learner", trace="episode"))
    refused = run_main(
        "run", str(spec), "--warm-start", str(trained), "--runs", str(tmp_path / "warm"), "--no-progress"
    )
    assert refused.returncode == 2 and not (tmp_path / "warm").exists()
    return refused.stderr


@pytest.mark.parametrize("policy_only", [True, False])
def test_another_state_space_is_refused_with_the_line_warm_start_gives(trained, tmp_path, policy_only):
    expected = _warm_start_line(trained, tmp_path, "8x8")
    assert "made for another state space than this run's env (checkpoint vs run: table 16x4 vs 64x4" in expected
    flags = ["--policy-only"] if policy_only else []
    refused = _play(trained, tmp_path / "out", *flags, "--env", "map_name=8x8")
    assert refused.returncode == 2 and refused.stderr == expected and len(expected.splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("case", BAD_CHECKPOINTS)
def test_a_bad_or_mismatched_checkpoint_is_refused_in_one_line(trained, tmp_path, case):
    damage, expected = BAD_CHECKPOINTS[case]
    source = tmp_path / "source"
    shutil.copytree(trained, source)
    damage(source / "qtables" / "learner.npz")
    before = fingerprint(source)
    for flags in (["--policy-only"], []):
        refused = _play(source, tmp_path / "out", *flags)
        assert refused.returncode == 2, refused.stdout
        assert refused.stderr.startswith("bdi-rl: error: ") and len(refused.stderr.splitlines()) == 1, refused.stderr
        assert expected in refused.stderr
    assert fingerprint(source) == before and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--agent", "nobody"], "no checkpoint for nobody (has: learner)"),
        (["--goal", "1,1"], "env.goals[0]: (1, 1) is a hole"),
        (["--goal", "9,9"], "env.goals[0]: (9, 9) is off the 4x4 map"),
        (["--env", "is_slippery=[1"], "is_slippery: not a TOML value"),
        (["--env", "=1"], "expected KEY=VALUE"),
        (["--goal", "a,b"], "expected X,Y"),
        (["--episodes", "0"], "--episodes"),
        (["--env", "render_mode=human"], "env.kwargs.render_mode"),
    ],
)
def test_bad_options_are_refused_in_one_line(trained, tmp_path, args, message):
    refused = _play(trained, tmp_path / "out", "--policy-only", *args)
    assert refused.returncode == 2 and message in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_which_table_and_which_env(trained, tmp_path):
    """A run of several tables needs --agent; a lone file plays on the env its metadata names;
    a shared world's table is refused in one line."""
    several = tmp_path / "several"
    shutil.copytree(trained, several)
    shutil.copy(several / "qtables" / "learner.npz", several / "qtables" / "learner-2.npz")
    refused = _play(several, tmp_path / "out", "--policy-only")
    assert refused.returncode == 2 and "has tables of learner, learner-2: say which with --agent" in refused.stderr
    refused = _play(several, tmp_path / "out", "--policy-only", "--agent", "learner-2")
    assert refused.returncode == 2 and "has no learner 'learner-2' (learners: learner)" in refused.stderr

    alone = tmp_path / "mine.npz"
    shutil.copy(trained / "qtables" / "learner.npz", alone)
    played = _played(_play(alone, tmp_path / "out", "--policy-only", "--episodes", "30"))
    assert _evaluation(played)["agents"]["learner"]["success_rate"] == 1.0
    env = tomllib.loads((played / "spec.toml").read_text())["env"]  # the map the table was trained on
    assert env["kwargs"] == {"is_slippery": False, "desc": ["SFFF", "FHFH", "FFFH", "HFFG"]}

    world = tmp_path / "world"
    shutil.copytree(trained, world)
    with open(world / "spec.toml", "a") as f:
        f.write("\n[world]\n")
    refused = _play(world, tmp_path / "none", "--policy-only")
    assert (
        refused.returncode == 2
        and "a shared world's run" in refused.stderr
        and "play a single-agent run's" in refused.stderr
    )
    assert not (tmp_path / "none").exists()


def test_a_play_is_not_resumed(trained, tmp_path):
    played = _played(_play(trained, tmp_path / "out", "--policy-only", "--episodes", "5"))
    summary = json.loads((played / "summary.json").read_text())
    (played / "summary.json").write_text(json.dumps({**summary, "interrupted": True}))
    before = fingerprint(played)
    refused = run_main("run", "--resume", str(played))
    assert refused.returncode == 2 and "an evaluation (bdi-rl play) is not resumed" in refused.stderr
    assert fingerprint(played) == before


# -- with the agent's plans, over XMPP (slow) -------------------------------------------------
@pytest.mark.slow
def test_train_list_and_play_with_the_plans(tmp_path):
    """A user's round: train with ``bdi-rl run``, find the table in ``qtable list``, play 1000
    greedy episodes through the agent's plans on the same map and on a moved goal."""
    spec = tmp_path / "det.toml"
    spec.write_text(TRAINED_SPEC.format(name="det", episodes=300, map="4x4", agent="learner", trace="episode"))
    runs = tmp_path / "runs"
    trained = run_cli("run", str(spec), "--runs", str(runs), "--no-progress")
    assert trained.returncode == 0, trained.stderr
    run_dir = Path(trained.stdout.strip().splitlines()[-1])
    listed = run_cli("qtable", "list", str(runs))
    assert listed.returncode == 0 and run_dir.name in listed.stdout and "verified" in listed.stdout
    before = fingerprint(run_dir)
    for extra, rate in (([], 1.0), (["--goal", "3,0"], 0.0)):
        result = run_cli("play", str(run_dir), "--episodes", "1000", "--runs", str(runs), "--no-progress", *extra)
        played = _played(result)
        entry = _evaluation(played)["agents"]["learner"]
        assert entry["episodes"] == 1000 and entry["success_rate"] == rate
        assert entry["success_ci95"][0] <= rate <= entry["success_ci95"][1]
        events = read_trace(played / "trace.jsonl")
        kinds = {e["kind"] for e in events}
        assert {"belief.add", "intention.start", "action", "rl.step", "episode.end", "eval"} <= kinds
        assert sum(e["kind"] == "episode.end" for e in events) == 1000
        assert any(e["kind"] == "belief.add" and e["data"]["belief"] == "warm_started(300)" for e in events)
    assert fingerprint(run_dir) == before
    video = run_cli("render", str(played), "--agent", "learner", "--episode", "999", "-o", str(tmp_path / "e.gif"))
    assert video.returncode == 0, video.stderr
